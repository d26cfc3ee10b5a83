/* RcppSpool's site works without a network (pkgdown/templates/head.html
   loads nothing from a CDN). This file stands in for what pkgdown.js
   expects from the libraries it would have loaded: the table of contents
   ("On this page", bootstrap-toc's Toc.init) is drawn here; the hiding
   navbar (headroom), copy buttons (clipboard.js) and search highlighting
   (mark.js) are left out. */
(function($) {
  $.fn.headroom = function() { return this; };
  $.fn.autocomplete = function() { return this; };
  window.ClipboardJS = { isSupported: function() { return false; } };
  window.Mark = function() { this.mark = function() {}; };
  window.Toc = {
    init: function(opts) {
      var $nav = opts.$nav;
      if (!$nav || !$nav.length) return;
      var $list = $('<ul class="nav nav-pills flex-column"></ul>');
      var $last = null;
      opts.$scope.filter("h2, h3").each(function() {
        var $h = $(this);
        if ($h.closest("#toc").length || $h.attr("data-toc-skip") !== undefined) return;
        var id = $h.attr("id") || $h.parent().attr("id");
        if (!id) return;
        var text = $h.clone().children(".anchor").remove().end().text().trim();
        var $item = $('<li><a class="nav-link"></a></li>');
        $item.children("a").attr("href", "#" + id).text(text);
        if (this.tagName === "H3" && $last) {
          var $sub = $last.children("ul");
          if (!$sub.length) $sub = $('<ul class="nav nav-pills flex-column"></ul>').appendTo($last);
          $sub.append($item);
        } else {
          $list.append($item);
          $last = $item;
        }
      });
      $nav.append($list);
    }
  };
})(window.jQuery);
