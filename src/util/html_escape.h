// Escaping text for HTML and XML (element text and quoted attribute values alike).
#pragma once

#include <string>
#include <string_view>

namespace brisk {

// & < > " ' as &amp; &lt; &gt; &quot; &#39;; every other byte unchanged (UTF-8 passes through).
// `quote` replaces &quot; for a caller that must match another escaper byte for byte (Jinja's
// escape filter follows markupsafe, which writes &#34;).
std::string HtmlEscape(std::string_view text, std::string_view quote = "&quot;");

}  // namespace brisk
