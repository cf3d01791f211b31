// Escaping text for HTML and XML (element text and quoted attribute values alike).
#pragma once

#include <string>
#include <string_view>

namespace brisk {

// & < > " ' as &amp; &lt; &gt; &quot; &#39;; every other byte unchanged (UTF-8 passes through).
std::string HtmlEscape(std::string_view text);

}  // namespace brisk
