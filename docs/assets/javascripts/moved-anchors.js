// An entry that moved to another page keeps its old anchor on the page it left, inside the link
// to its new page (kb:error-index on the troubleshooting page: <a href="errors/x/"><span
// id="err-ID"></span></a>). A reader who follows an old link, troubleshooting/#err-ID, lands on
// that link; this takes them on to the entry itself, #err-ID on the linked page. Served or from
// a folder (file://): the link's href is already resolved against the page.
(function () {
  "use strict";
  function follow() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    var target = document.getElementById(id);
    var link = target && target.parentElement && target.parentElement.closest("a[href]");
    if (!link || !link.closest(".kb-error-index")) return;
    var url = new URL(link.href, location.href);
    url.hash = id;
    location.replace(url.href);
  }
  window.addEventListener("hashchange", follow);
  follow();
})();
