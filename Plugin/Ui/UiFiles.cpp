#include "Ui/UiFiles.h"

#include <cstring>

namespace IngestPerf
{
  const UiFile* FindUiFile(const std::string& path)
  {
    for (size_t i = 0; i < kEmbeddedUiFileCount; i++)
    {
      if (path == kEmbeddedUiFiles[i].path)
      {
        return &kEmbeddedUiFiles[i];
      }
    }
    return nullptr;
  }


  const char* UiContentType(const std::string& path)
  {
    struct Type
    {
      const char* extension;
      const char* contentType;
    };
    static const Type kTypes[] = {{".html", "text/html; charset=utf-8"},
                                  {".js", "text/javascript; charset=utf-8"},
                                  {".css", "text/css; charset=utf-8"},
                                  {".txt", "text/plain; charset=utf-8"},
                                  {".json", "application/json"},
                                  {".svg", "image/svg+xml"},
                                  {".png", "image/png"},
                                  {".ico", "image/x-icon"}};
    const size_t slash = path.rfind('/');
    const size_t dot = path.rfind('.');
    if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
    {
      for (const Type& type : kTypes)
      {
        if (path.compare(dot, std::string::npos, type.extension) == 0)
        {
          return type.contentType;
        }
      }
    }
    return "application/octet-stream";
  }


  const char* OrthancExplorerLinkScript()
  {
    // Orthanc Explorer (jQuery Mobile) builds its home page, #lookup, on each visit: the button is
    // added once per showing. Its href is relative to /app/explorer.html, so it follows a reverse
    // proxy's prefix, and the browser sends the credentials it already uses for Orthanc Explorer;
    // rel=external: a page load, not jQuery Mobile's loading of a page into its own.
    return R"js(
$('#lookup').live('pagebeforeshow', function() {
  $('#ingest-perf-ui').remove();
  var link = $('<a>')
    .attr('id', 'ingest-perf-ui')
    .attr('href', '../perf/ui/index.html')
    .attr('rel', 'external')
    .attr('data-ajax', 'false')
    .attr('data-role', 'button')
    .attr('data-icon', 'grid')
    .attr('data-theme', 'e')
    .text('Ingest performance (where ingest time goes now)');
  link.insertAfter($('#lookup-result'));
  link.button();
});
)js";
  }
}
