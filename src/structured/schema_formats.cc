// String formats, each a grammar for a subset of what ajv-formats ("full" mode, the validator
// outputs are checked against) accepts:
//   date       RFC 3339 full-date with real month lengths and leap years (Feb 29 only in years
//              divisible by 4 and not by 100 unless by 400).
//   time       hh:mm:ss, optional 1-9 fraction digits, then Z, z or +hh:mm / -hh:mm (offsets
//              within 23:59); no leap second (ajv takes :60 only at 23:59 UTC).
//   date-time  date "T" time.
//   uuid       8-4-4-4-12 hexadecimal digits, either case (no urn:uuid: prefix).
//   email      dot-atoms of ajv's local-part characters, "@", two or more LDH labels.
//   hostname   1-6 LDH labels of at most 40 characters (so at most 245 < 253 in all), no
//              trailing dot.
//   ipv4       dotted quad, octets 0-255 without leading zeros.
//   uri        http or https, "://", LDH labels, optional port, path, query and fragment made
//              of RFC 3986 pchar (percent escapes included).
// None of these contains '"' or '\', so every character is written as itself in the string.
#include <string>
#include <string_view>

#include "structured/schema_compiler.h"

namespace brisk::structured::schema {
namespace {

Symbol Ch(char c) { return Symbol::Char(uint32_t(uint8_t(c))); }
Symbol R(char lo, char hi) { return Symbol::Set({{uint32_t(lo), uint32_t(hi)}}); }
Symbol D() { return R('0', '9'); }
Symbol Hex() { return Symbol::Set({{'0', '9'}, {'a', 'f'}, {'A', 'F'}}); }
Symbol Alnum() { return Symbol::Set({{'0', '9'}, {'a', 'z'}, {'A', 'Z'}}); }
// Letters, digits and the characters of `extra`.
Symbol AlnumAnd(std::string_view extra) {
  std::vector<CharRange> r = {{'0', '9'}, {'a', 'z'}, {'A', 'Z'}};
  for (char c : extra) r.push_back({uint32_t(uint8_t(c)), uint32_t(uint8_t(c))});
  return Symbol::Set(std::move(r));
}
Sequence Lit(std::string_view s) { return GrammarBuilder::Literal(s); }
Sequence Cat(std::initializer_list<Sequence> parts) {
  Sequence out;
  for (const Sequence& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
Sequence Ref(int32_t r) { return {Symbol::Ref(r)}; }

// Our own bounds: Repeat cannot fail on them.
int32_t Rep(GrammarBuilder& b, std::string_view name, Sequence item, int min, int max) {
  Result<int32_t> r = b.Repeat(name, std::move(item), min, max);
  BRISK_CHECK(r.ok());
  return *r;
}

int32_t Date(GrammarBuilder& b, const std::string& n) {
  const Sequence year = {D(), D(), D(), D()};
  const int32_t d31 =
      b.AddRule(n, {{Ch('0'), R('1', '9')}, {R('1', '2'), D()}, Lit("30"), Lit("31")});
  const int32_t d30 = b.AddRule(n, {{Ch('0'), R('1', '9')}, {R('1', '2'), D()}, Lit("30")});
  const int32_t d28 =
      b.AddRule(n, {{Ch('0'), R('1', '9')}, {Ch('1'), D()}, {Ch('2'), R('0', '8')}});
  const int32_t m31 =
      b.AddRule(n, {Lit("01"), Lit("03"), Lit("05"), Lit("07"), Lit("08"), Lit("10"), Lit("12")});
  const int32_t m30 = b.AddRule(n, {Lit("04"), Lit("06"), Lit("09"), Lit("11")});
  // Two digits divisible by 4: 00 (`with_zero`) 04 08 12 ... 96.
  auto by4 = [&](bool with_zero) {
    return b.AddRule(n, {{Ch('0'), with_zero ? Symbol::Set({{'0', '0'}, {'4', '4'}, {'8', '8'}})
                                             : Symbol::Set({{'4', '4'}, {'8', '8'}})},
                         {Symbol::Set({{'2', '2'}, {'4', '4'}, {'6', '6'}, {'8', '8'}}),
                          Symbol::Set({{'0', '0'}, {'4', '4'}, {'8', '8'}})},
                         {Symbol::Set({{'1', '1'}, {'3', '3'}, {'5', '5'}, {'7', '7'}, {'9', '9'}}),
                          Symbol::Set({{'2', '2'}, {'6', '6'}})}});
  };
  const int32_t leap =
      b.AddRule(n, {{D(), D(), Symbol::Ref(by4(false))}, Cat({Ref(by4(true)), Lit("00")})});
  return b.AddRule(n, {Cat({year, Lit("-"), Ref(m31), Lit("-"), Ref(d31)}),
                       Cat({year, Lit("-"), Ref(m30), Lit("-"), Ref(d30)}),
                       Cat({year, Lit("-02-"), Ref(d28)}), Cat({Ref(leap), Lit("-02-29")})});
}

int32_t Time(GrammarBuilder& b, const std::string& n) {
  const int32_t hh = b.AddRule(n, {{R('0', '1'), D()}, {Ch('2'), R('0', '3')}});
  const Sequence mm = {R('0', '5'), D()};
  const int32_t frac = b.AddRule(n, {{}, {Ch('.'), Symbol::Ref(Rep(b, n, {D()}, 1, 9))}});
  const int32_t tz = b.AddRule(
      n,
      {Lit("Z"), Lit("z"), Cat({{Symbol::Set({{'+', '+'}, {'-', '-'}})}, Ref(hh), Lit(":"), mm})});
  return b.AddRule(n, {Cat({Ref(hh), Lit(":"), mm, Lit(":"), mm, Ref(frac), Ref(tz)})});
}

int32_t Uuid(GrammarBuilder& b, const std::string& n) {
  Sequence s;
  for (int group : {8, 4, 4, 4, 12}) {
    if (!s.empty()) s.push_back(Ch('-'));
    for (int i = 0; i < group; ++i) s.push_back(Hex());
  }
  return b.AddRule(n, {s});
}

// A letter-digit-hyphen label of 1..max characters (max < 0: any length), not starting or ending
// with a hyphen.
int32_t Label(GrammarBuilder& b, const std::string& n, int max) {
  const int32_t middle = Rep(b, n, {AlnumAnd("-")}, 0, max < 0 ? -1 : max - 2);
  const int32_t tail = b.AddRule(n, {{}, {Symbol::Ref(middle), Alnum()}});
  return b.AddRule(n, {{Alnum(), Symbol::Ref(tail)}});
}

int32_t Email(GrammarBuilder& b, const std::string& n) {
  const int32_t atom = Rep(b, n, {AlnumAnd("!#$%&'*+/=?^_`{|}~-")}, 1, -1);
  const int32_t more_atoms = Rep(b, n, {Ch('.'), Symbol::Ref(atom)}, 0, -1);
  const int32_t label = Label(b, n, -1);
  const int32_t subdomains = Rep(b, n, {Symbol::Ref(label), Ch('.')}, 1, -1);
  return b.AddRule(n, {{Symbol::Ref(atom), Symbol::Ref(more_atoms), Ch('@'),
                        Symbol::Ref(subdomains), Symbol::Ref(label)}});
}

int32_t Hostname(GrammarBuilder& b, const std::string& n) {
  const int32_t label = Label(b, n, 40);
  const int32_t more = Rep(b, n, {Ch('.'), Symbol::Ref(label)}, 0, 5);
  return b.AddRule(n, {{Symbol::Ref(label), Symbol::Ref(more)}});
}

int32_t Ipv4(GrammarBuilder& b, const std::string& n) {
  const int32_t octet = b.AddRule(n, {Cat({Lit("25"), {R('0', '5')}}),
                                      {Ch('2'), R('0', '4'), D()},
                                      {Ch('1'), D(), D()},
                                      {R('1', '9'), D()},
                                      {D()}});
  const Sequence o = Ref(octet);
  return b.AddRule(n, {Cat({o, Lit("."), o, Lit("."), o, Lit("."), o})});
}

int32_t Uri(GrammarBuilder& b, const std::string& n) {
  const int32_t label = Label(b, n, -1);
  const int32_t labels = Rep(b, n, {Ch('.'), Symbol::Ref(label)}, 0, -1);
  const int32_t port = b.AddRule(n, {{}, {Ch(':'), Symbol::Ref(Rep(b, n, {D()}, 1, 5))}});
  const int32_t pchar = b.AddRule(n, {{AlnumAnd("-._~!$&'()*+,;=:@")}, {Ch('%'), Hex(), Hex()}});
  const int32_t segment = Rep(b, n, {Symbol::Ref(pchar)}, 0, -1);
  const int32_t path = Rep(b, n, {Ch('/'), Symbol::Ref(segment)}, 0, -1);
  const int32_t qchar = b.AddRule(n, {{Symbol::Ref(pchar)}, Lit("/"), Lit("?")});
  const int32_t qchars = Rep(b, n, {Symbol::Ref(qchar)}, 0, -1);
  const int32_t query = b.AddRule(n, {{}, {Ch('?'), Symbol::Ref(qchars)}});
  const int32_t fragment = b.AddRule(n, {{}, {Ch('#'), Symbol::Ref(qchars)}});
  const int32_t scheme = b.AddRule(n, {Lit("http"), Lit("https")});
  return b.AddRule(n, {Cat({Ref(scheme), Lit("://"), Ref(label), Ref(labels), Ref(port), Ref(path),
                            Ref(query), Ref(fragment)})});
}

}  // namespace

Result<int32_t> SchemaCompiler::CompileFormat(const std::string& format) {
  if (auto it = formats_.find(format); it != formats_.end()) return it->second;
  const std::string n = Name(format);
  int32_t body = -1;
  if (format == "date") body = Date(b(), n);
  if (format == "time") body = Time(b(), n);
  if (format == "date-time")
    body = b().AddRule(n, {Cat({Ref(Date(b(), n)), Lit("T"), Ref(Time(b(), n))})});
  if (format == "uuid") body = Uuid(b(), n);
  if (format == "email") body = Email(b(), n);
  if (format == "hostname") body = Hostname(b(), n);
  if (format == "ipv4") body = Ipv4(b(), n);
  if (format == "uri") body = Uri(b(), n);
  if (body < 0) return Error("internal: format '" + format + "' has no grammar");
  const int32_t rule = b().AddRule(n, {{Symbol::Char('"'), Symbol::Ref(body), Symbol::Char('"')}});
  formats_[format] = rule;
  return rule;
}

}  // namespace brisk::structured::schema
