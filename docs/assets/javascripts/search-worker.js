/* The handbook's search worker: Material's own (loaded from the URL after "#"), with two changes
 * that make the search box take what readers type and paste (issue 37). Material is told to
 * start this worker instead of its own by search-setup.js, which runs before Material's bundle.
 *
 * 1. Each query is rewritten before Material's handler sees it:
 *    - lunr reads + - : ^ ~ * and quotes as query syntax: a leading "-" excludes a word, so
 *      "torchrun --nproc_per_node" found nothing. They become spaces, as the index's separator
 *      makes them (and the punctuation of a pasted message) in the pages' text; a hyphen inside
 *      a word stays, which lunr's own query parser splits on.
 *    - Word forms: lunr's stemmer cannot be used, because Material makes every query word a
 *      prefix (tpu -> tpu*) and lunr does not stem a prefix, so a stemmed index misses typed
 *      words. Instead a word with a common English ending is searched by its stem, as a prefix:
 *      "recompilation" -> "recompil" finds recompile, recompiles and recompilation.
 *    - A whole number is searched as that number only (no prefix), so a value in a pasted
 *      message ("index 1") does not match every number that starts with 1.
 *    - A snake_case name typed up to an underscore ("TORCH_TPU_") is searched as its whole
 *      words, not as prefixes that rank every word starting with "torch" (torchrun) first.
 *    - Stop words go (lunr leaves them out of the index, but as prefixes "a*" and "in*" they
 *      matched every word starting so), except the last word, which may be half typed.
 * 2. Ranking: Material turns lunr's length normalisation off (b = 0), so a long heading that
 *    repeats a pasted message's common words outranked the short heading that is that message.
 *    A little of it is turned back on (LENGTH_WEIGHT).
 * 3. Speed: the lunr index, once built, is kept in IndexedDB for the next page load (below).
 *
 * Under node the rewrite is exported, for tests/browser/test_search_query.py.
 */
(function () {
  "use strict";

  var LENGTH_WEIGHT = 0.3; // lunr's b: 0 ignores a field's length, 1 divides by it in full
  var SETUP = 0; // Material's SearchMessageType
  var QUERY = 2;
  // Operators anywhere, and + or - at the start of a word ("torch-tpu" stays one query word).
  var SYNTAX = /[:^~*"'`,;()!?[\]{}=|<>]+|(^|\s)[+\-]+/g;
  // Longest first: the first ending that leaves a stem of 5 letters or more is cut (words of 6 or more).
  var ENDINGS = ["ations", "ation", "ions", "ion", "ings", "ing", "ies", "ed", "es", "s", "e"];

  function stem(word) {
    var lower = word.toLowerCase();
    if (!/^[a-z]{6,}$/.test(lower)) return word;
    for (var i = 0; i < ENDINGS.length; i++) {
      var end = ENDINGS[i];
      if (lower.length - end.length >= 5 && lower.slice(-end.length) === end) {
        return word.slice(0, -end.length);
      }
    }
    return word;
  }

  // The start of a snake_case name, typed up to an underscore: its parts are whole words (exact).
  // TORCH_TPU_ -> "TORCH^1 TPU^1", not the prefixes torch* (torchrun, torchcomms) and tpu*.
  function namePrefix(word) {
    var parts = word.split("_").filter(function (part) { return part.length > 0; });
    return parts.map(function (part) { return part + "^1"; }).join(" ");
  }

  // lunr's stop words (its own filter, once Material's worker has loaded lunr).
  function isStopWord(word) {
    var lunr = typeof self !== "undefined" && self.lunr;
    return Boolean(lunr && lunr.stopWordFilter) && !lunr.stopWordFilter(word.toLowerCase());
  }

  function rewrite(query) {
    var words = query.replace(SYNTAX, "$1 ").split(/\s+/).filter(function (word) { return word.length > 0; });
    return words
      .filter(function (word, i) { return i === words.length - 1 || !isStopWord(word); })
      .map(function (word) {
        if (/^\d+\.?$/.test(word)) return word.replace(".", "") + "^1";
        return /\w_$/.test(word) ? namePrefix(word) : stem(word);
      })
      .join(" ");
  }

  if (typeof module === "object" && module.exports) {
    module.exports = rewrite;
    return;
  }

  // 3. The lunr index Material builds is kept in IndexedDB, keyed by a digest of the search index
  // and these settings: the next page load (a new worker) loads it instead of building it again,
  // which is most of the time from a page load to the first results. Where IndexedDB is not
  // available (or fails), the index is built as before.
  var CACHE_VERSION = "1 " + LENGTH_WEIGHT;
  var database = openDatabase();
  var previous = database.then(stored); // read while Material's page fetches the search index

  function openDatabase() {
    return new Promise(function (resolve) {
      setTimeout(function () { resolve(null); }, 1000); // never wait long for a cache
      try {
        var request = indexedDB.open("kb-search", 1);
        request.onupgradeneeded = function () { request.result.createObjectStore("index"); };
        request.onsuccess = function () { resolve(request.result); };
        request.onerror = request.onblocked = function () { resolve(null); };
      } catch (err) {
        resolve(null);
      }
    });
  }

  function stored(db) {
    return new Promise(function (resolve) {
      if (!db) return resolve(null);
      setTimeout(function () { resolve(null); }, 1000);
      try {
        var request = db.transaction("index").objectStore("index").get("index");
        request.onsuccess = function () { resolve(request.result || null); };
        request.onerror = function () { resolve(null); };
      } catch (err) {
        resolve(null);
      }
    });
  }

  function store(db, record) {
    try {
      db.transaction("index", "readwrite").objectStore("index").put(record, "index");
    } catch (err) { /* the next page load builds the index again */ }
  }

  function digest(text) { // FNV-1a, 32 bits, with the length
    var hash = 0x811c9dc5;
    for (var i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193) >>> 0;
    }
    return hash.toString(16) + "-" + text.length;
  }

  // Before Material builds its index: either the stored index is loaded (each document still goes
  // through Material's tokenizer, which records where words are for highlighting), or the built
  // one is stored once the worker has answered that it is ready.
  function prepare(data) {
    var lunr = self.lunr;
    var builder = lunr.Builder.prototype;
    var add = builder.add;
    var build = builder.build;
    builder.b = function () { this._b = LENGTH_WEIGHT; };
    var key = CACHE_VERSION + " " + digest(JSON.stringify([data.config, data.docs]));
    return database.then(function (db) {
      return previous.then(function (record) {
        if (record && record.key === key) {
          builder.add = function (doc) {
            for (var name in this._fields) this.tokenizer(this._fields[name].extractor(doc), { fields: [name] });
          };
          builder.build = function () {
            builder.add = add;
            builder.build = build;
            return lunr.Index.load(JSON.parse(record.index));
          };
        } else if (db) {
          builder.build = function () {
            builder.build = build;
            var index = build.call(this);
            setTimeout(function () { store(db, { key: key, index: JSON.stringify(index) }); }, 500);
            return index;
          };
        }
      });
    }).catch(function () {
      builder.add = add;
      builder.build = build;
    });
  }

  // Material's worker adds its message handler when it runs: wrap it as it is added.
  var listen = self.addEventListener;
  self.addEventListener = function (type, handler, options) {
    if (type !== "message") return listen.call(self, type, handler, options);
    return listen.call(self, type, function (event) {
      var message = event.data;
      var that = this;
      if (message && message.type === SETUP && self.lunr) {
        return prepare(message.data).then(function () { return handler.call(that, event); });
      }
      if (message && message.type === QUERY && typeof message.data === "string") {
        event = { data: { type: QUERY, data: rewrite(message.data) } };
      }
      return handler.call(this, event);
    }, options);
  };

  // A worker's own URL; in the offline bundle's iframe-worker shim, this script's (which the shim
  // suffixes with "?" and a time stamp).
  var script = typeof document !== "undefined" && document.currentScript;
  var material = (script ? script.src : self.location.href).split("#")[1];
  if (material) importScripts(material.split("?")[0]);
})();
