# Embeds the web UI (web/) into the binary (DESIGN §6 "Web UI"): every file becomes a byte string
# in one generated .cc with its URL path, content type and a strong ETag, which
# src/server/static_assets.cc looks up. The binary then needs no files next to it, and a request
# path can only ever select an entry of that table, never touch the filesystem.
#
# Two roles in one file:
#  - included from a CMakeLists.txt, it defines brisk_embed_web(TARGET WEB_DIR);
#  - run as `cmake -DBRISK_WEB_MANIFEST=... -DBRISK_WEB_OUT=... -P this-file`
#    (from the custom command that function adds), it writes the .cc.

cmake_minimum_required(VERSION 3.20)

if(NOT CMAKE_SCRIPT_MODE_FILE)
  # Stages KaTeX (Debian's libjs-katex + fonts-katex) under OUT_DIR/vendor/katex so it is
  # served from /vendor/katex/ like any other embedded file: math renders with nothing fetched
  # from outside the machine. Sets REL_VAR/ABS_VAR to the staged files' URL paths and paths.
  # The CSS is rewritten to reference only the woff2 fonts (every browser the UI supports reads
  # woff2, so the .woff/.ttf copies would be dead weight in the binary).
  function(brisk_stage_katex out_dir rel_var abs_var)
    set(BRISK_KATEX_DIR "/usr/share/javascript/katex" CACHE PATH
        "Directory with katex.min.js, katex.min.css and fonts/ (Debian: libjs-katex)")
    foreach(f katex.min.js katex.min.css fonts)
      if(NOT EXISTS ${BRISK_KATEX_DIR}/${f})
        message(FATAL_ERROR "KaTeX not found: ${BRISK_KATEX_DIR}/${f} is missing. The web UI "
                            "embeds KaTeX for LaTeX math; install it with scripts/setup "
                            "(Debian: apt-get install libjs-katex fonts-katex) or point "
                            "-DBRISK_KATEX_DIR= at a KaTeX 0.16 dist directory.")
      endif()
    endforeach()
    set(stage ${out_dir}/vendor/katex)
    file(MAKE_DIRECTORY ${stage}/fonts)
    file(READ ${BRISK_KATEX_DIR}/katex.min.css css)
    string(REGEX REPLACE ",url\\(fonts/[^)]*\\.woff\\) format\\('woff'\\)" "" css "${css}")
    string(REGEX REPLACE ",url\\(fonts/[^)]*\\.ttf\\) format\\('truetype'\\)" "" css "${css}")
    if(css MATCHES "\\.(woff|ttf)\\)")
      message(FATAL_ERROR "embed_web.cmake: ${BRISK_KATEX_DIR}/katex.min.css still references "
                          "non-woff2 fonts after rewriting (unexpected KaTeX version?)")
    endif()
    file(WRITE ${stage}/katex.min.css.tmp "${css}")
    file(COPY_FILE ${stage}/katex.min.css.tmp ${stage}/katex.min.css ONLY_IF_DIFFERENT)
    file(REMOVE ${stage}/katex.min.css.tmp)
    file(COPY_FILE ${BRISK_KATEX_DIR}/katex.min.js ${stage}/katex.min.js ONLY_IF_DIFFERENT)
    set(rels vendor/katex/katex.min.css vendor/katex/katex.min.js)
    set(abss ${stage}/katex.min.css ${stage}/katex.min.js)
    string(REGEX MATCHALL "fonts/[A-Za-z0-9_-]+\\.woff2" fonts "${css}")
    list(REMOVE_DUPLICATES fonts)
    foreach(font IN LISTS fonts)
      if(NOT EXISTS ${BRISK_KATEX_DIR}/${font})
        message(FATAL_ERROR "KaTeX font ${BRISK_KATEX_DIR}/${font} is missing (install "
                            "fonts-katex)")
      endif()
      file(COPY_FILE ${BRISK_KATEX_DIR}/${font} ${stage}/${font} ONLY_IF_DIFFERENT)
      list(APPEND rels vendor/katex/${font})
      list(APPEND abss ${stage}/${font})
    endforeach()
    set(${rel_var} ${rels} PARENT_SCOPE)
    set(${abs_var} ${abss} PARENT_SCOPE)
  endfunction()

  # Adds the generated web_assets.cc to TARGET. The glob is CONFIGURE_DEPENDS so an added or
  # removed file re-runs CMake; the manifest (rewritten only when the list changes) and every
  # file are DEPENDS, so any edit, addition or removal regenerates the .cc. The manifest holds
  # "url-path|file" lines: web/ files plus the staged KaTeX files.
  function(brisk_embed_web target web_dir)
    set(script ${CMAKE_CURRENT_FUNCTION_LIST_FILE})
    file(GLOB_RECURSE web_files CONFIGURE_DEPENDS LIST_DIRECTORIES false ${web_dir}/*)
    set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/brisk_web)
    set(entries "")
    set(abs_files "")
    foreach(f IN LISTS web_files)
      file(RELATIVE_PATH rel ${web_dir} ${f})
      # Editor droppings and dotfiles are never served.
      if(rel MATCHES "(^|/)\\." OR rel MATCHES "~$")
        continue()
      endif()
      if(rel MATCHES "^vendor/")
        message(FATAL_ERROR "embed_web.cmake: web/vendor/ is reserved for staged libraries")
      endif()
      list(APPEND entries "${rel}|${f}")
      list(APPEND abs_files ${f})
    endforeach()
    brisk_stage_katex(${out_dir} katex_rels katex_abss)
    foreach(rel abs IN ZIP_LISTS katex_rels katex_abss)
      list(APPEND entries "${rel}|${abs}")
      list(APPEND abs_files ${abs})
    endforeach()
    list(SORT entries)
    set(manifest ${out_dir}/web_manifest.txt)
    set(out ${out_dir}/web_assets.cc)
    string(REPLACE ";" "\n" manifest_text "${entries}")
    file(CONFIGURE OUTPUT ${manifest} CONTENT "${manifest_text}\n" @ONLY)
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -DBRISK_WEB_MANIFEST=${manifest} -DBRISK_WEB_OUT=${out}
              -P ${script}
      DEPENDS ${abs_files} ${manifest} ${script}
      COMMENT "Embedding web UI (${web_dir} and KaTeX)"
      VERBATIM)
    target_sources(${target} PRIVATE ${out})
  endfunction()
  return()
endif()

# ---- script mode: write the .cc ----

foreach(v BRISK_WEB_MANIFEST BRISK_WEB_OUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "embed_web.cmake: -D${v}=... is required")
  endif()
endforeach()

function(brisk_web_content_type rel out_var)
  string(TOLOWER "${rel}" lower)
  if(lower MATCHES "\\.html?$")
    set(type "text/html; charset=utf-8")
  elseif(lower MATCHES "\\.css$")
    set(type "text/css; charset=utf-8")
  elseif(lower MATCHES "\\.m?js$")
    set(type "text/javascript; charset=utf-8")
  elseif(lower MATCHES "\\.json$")
    set(type "application/json")
  elseif(lower MATCHES "\\.svg$")
    set(type "image/svg+xml")
  elseif(lower MATCHES "\\.png$")
    set(type "image/png")
  elseif(lower MATCHES "\\.ico$")
    set(type "image/x-icon")
  elseif(lower MATCHES "\\.woff2$")
    set(type "font/woff2")
  elseif(lower MATCHES "\\.txt$")
    set(type "text/plain; charset=utf-8")
  else()
    # Refuse rather than guess: a file we cannot label would be served with a wrong type.
    message(FATAL_ERROR "embed_web.cmake: no content type known for web/${rel} "
                        "(add its extension to brisk_web_content_type)")
  endif()
  set(${out_var} "${type}" PARENT_SCOPE)
endfunction()

file(STRINGS ${BRISK_WEB_MANIFEST} entries)
string(REPEAT "[0-9a-f]" 96 chunk_re)
set(body "")
set(table "")
set(i 0)
foreach(entry IN LISTS entries)
  string(FIND "${entry}" "|" bar)
  string(SUBSTRING "${entry}" 0 ${bar} rel)
  math(EXPR bar "${bar} + 1")
  string(SUBSTRING "${entry}" ${bar} -1 path)
  if(NOT EXISTS ${path})
    message(FATAL_ERROR "embed_web.cmake: ${path} is listed but missing (re-run cmake)")
  endif()
  if(rel MATCHES "[\"\\\\]")
    message(FATAL_ERROR "embed_web.cmake: unsupported character in file name web/${rel}")
  endif()
  brisk_web_content_type("${rel}" type)
  file(SIZE ${path} size)
  file(SHA256 ${path} sha)
  string(SUBSTRING ${sha} 0 32 etag)
  # Every byte as \xHH: a following \x always ends the previous escape, so no escape can swallow
  # the next character. 48 bytes per source line keeps lines short (CMake regex has no {n}).
  file(READ ${path} hex HEX)
  string(REGEX REPLACE "(${chunk_re})" "\\1;" chunks "${hex}")
  set(literal "")
  foreach(chunk IN LISTS chunks)
    if(NOT chunk STREQUAL "")
      string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" escaped "${chunk}")
      string(APPEND literal "    \"${escaped}\"\n")
    endif()
  endforeach()
  if(literal STREQUAL "")
    set(literal "    \"\"\n")
  endif()
  string(APPEND body "// web/${rel}\nconstexpr char kData${i}[] =\n${literal};\n")
  string(APPEND table "    {\"/${rel}\", \"${type}\", std::string_view(kData${i}, ${size}),\n"
                      "     \"\\\"${etag}\\\"\"},\n")
  math(EXPR i "${i} + 1")
endforeach()

set(content "// Generated by cmake/embed_web.cmake from ${BRISK_WEB_MANIFEST}: do not edit.
#include <cstddef>

#include \"server/static_assets.h\"

namespace brisk::server::internal {
namespace {

${body}
// Sorted by path (the manifest is sorted), so lookups can binary-search.
constexpr StaticAsset kAssets[] = {
${table}    {\"\", \"\", \"\", \"\"},  // keeps the array non-empty when web/ is empty
};

}  // namespace

std::span<const StaticAsset> EmbeddedStaticAssets() {
  return std::span<const StaticAsset>(kAssets, sizeof(kAssets) / sizeof(kAssets[0]) - 1);
}

}  // namespace brisk::server::internal
")

# Write only on change, so an unchanged UI does not recompile and relink.
set(tmp ${BRISK_WEB_OUT}.tmp)
file(WRITE ${tmp} "${content}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${tmp} ${BRISK_WEB_OUT}
                RESULT_VARIABLE copy_rc)
if(NOT copy_rc EQUAL 0)
  message(FATAL_ERROR "embed_web.cmake: cannot write ${BRISK_WEB_OUT}")
endif()
file(REMOVE ${tmp})
