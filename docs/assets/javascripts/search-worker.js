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
 *    - A word the index holds as one token is also searched as typed, with a boost: as a prefix
 *      only, "bool" found "boolean dtypes are not supported" as well as "bool dtype is not
 *      supported", and the longer heading could come first.
 * 2. Ranking: Material turns lunr's length normalisation off (b = 0), so a long heading that
 *    repeats a pasted message's common words outranked the short heading that is that message.
 *    A little of it is turned back on (LENGTH_WEIGHT).
 *    A heading pasted whole comes first: lunr scores words, not their order or punctuation, so
 *    near-twin messages ("got unrecognized device type: …" and "Got unrecognized device type, …",
 *    "dtype is not supported" and "bool dtype is not supported") tied. A section whose heading's
 *    text (each part between its values) is in the typed text, in order, has its score multiplied
 *    by up to TITLE_IN_QUERY; one whose heading holds the typed text by up to QUERY_IN_TITLE, each
 *    by the share of the text the match covers.
 * 3. Speed (the first results within 300 ms of the page becoming interactive, on every load):
 *    - the lunr index, once built, is kept in IndexedDB for the next page load, which loads it and
 *      fills the tables that highlighting reads only for the documents in some results. It is kept
 *      as text per term and per section, read only when a query reaches it, with sections named by
 *      short keys (1.4 MB where lunr's own JSON is 3.1 MB; tests/browser/test_search_stored.py):
 *      a new worker's JSON.parse of the whole index was most of a later load's time to results;
 *    - a section's words field (kb/render/searchindex.py: its words once each, never shown) is added
 *      to the index without lunr's per-word bookkeeping, and taken off the section, so it is
 *      neither highlighted nor sent back with each result;
 *    - on a served site this worker is started from the page head (search-early.js), fetches the
 *      search index itself (search-early.js or search-setup.js gives its URL; the fetch starts
 *      before Material's worker is loaded) and answers "ready" as soon as its index is built: the
 *      page, still busy loading, would hand over its own copy only later. That copy is then not
 *      built again.
 *
 * Under node the rewrite is exported, for tests/browser/test_search_query.py.
 */
(function () {
  "use strict";

  var LENGTH_WEIGHT = 0.3; // lunr's b: 0 ignores a field's length, 1 divides by it in full
  var EXACT_BOOST = 3; // a word found as typed, not only as the start of a longer one
  var TITLE_IN_QUERY = 50; // a heading whose whole text is in the query: the message pasted whole
  var QUERY_IN_TITLE = 5; // a query that is part of a heading: a fragment of it pasted
  var TITLE_MIN = 12; // characters of a heading's own text (its values left out) for either to count
  // A word the index holds as one token (no digit, underscore or inner capital, which its separator
  // splits on): only such a word can be found as typed.
  var ONE_TOKEN = /^[A-Za-z][a-z]{2,}$/;
  var SETUP = 0; // Material's SearchMessageType
  var READY = 1;
  var QUERY = 2;
  var WORDS = "words"; // the index field of a section's other words (mkdocs.yml, kb/render/searchindex.py)
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
        if (/\w_$/.test(word)) return namePrefix(word);
        return ONE_TOKEN.test(word) ? stem(word) + " " + word.toLowerCase() + "^" + EXACT_BOOST : stem(word);
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
  var CACHE_VERSION = "3 " + LENGTH_WEIGHT; // 2: the words field without positions; 3: read on demand
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

  // The stored index: each term's postings and each section's vectors as text, read (JSON.parse)
  // only when a query reaches them, so a page load does not turn the whole index into objects
  // (most of the time the load took). A posting names a section by its place in the search index's
  // docs (shortKey), not by its address: one posting per word and section, each keyed by the section,
  // so short keys make the stored index a fraction of the size. Returns null (store nothing) when a
  // section of the index is not among the docs.
  function compact(index, refs) {
    var ids = Object.create(null);
    for (var i = 0; i < refs.length; i++) ids[refs[i]] = shortKey(i);
    var missing = false;
    function id(ref) {
      if (!(ref in ids)) missing = true;
      return ids[ref];
    }
    var terms = Object.keys(index.invertedIndex).sort(); // the order TokenSet.Builder needs
    var postings = terms.map(function (term) {
      var posting = index.invertedIndex[term];
      var short = { _index: posting._index };
      for (var field in posting) {
        if (field === "_index") continue;
        short[field] = {};
        for (var ref in posting[field]) short[field][id(ref)] = posting[field][ref];
      }
      return JSON.stringify(short);
    });
    var vectorRefs = Object.keys(index.fieldVectors);
    var vectors = vectorRefs.map(function (fieldRef) {
      return JSON.stringify(index.fieldVectors[fieldRef].toJSON());
    });
    vectorRefs = vectorRefs.map(function (fieldRef) {
      var cut = fieldRef.indexOf(self.lunr.FieldRef.joiner);
      return fieldRef.slice(0, cut + 1) + id(fieldRef.slice(cut + 1));
    });
    if (missing) return null;
    return {
      fields: index.fields, pipeline: index.pipeline.toJSON(),
      terms: terms, postings: postings, vectorRefs: vectorRefs, vectors: vectors
    };
  }

  // A section's key: its place in letters (a ... Z, ba ...), never a number, whose keys an object
  // would list first, so the sections of a posting stay in the order lunr added them (which orders
  // results of equal score).
  var LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

  function shortKey(place) {
    var key = "";
    do {
      key = LETTERS.charAt(place % LETTERS.length) + key;
      place = Math.floor(place / LETTERS.length);
    } while (place > 0);
    return key;
  }

  // An object whose values are made from their text when first read (Index.query reads a handful).
  function lazyTable(keys, texts, make) {
    var at = Object.create(null);
    for (var i = 0; i < keys.length; i++) at[keys[i]] = i;
    var made = Object.create(null);
    function get(key) {
      if (typeof key !== "string" || !(key in at)) return undefined;
      if (!(key in made)) made[key] = make(texts[at[key]]);
      return made[key];
    }
    return new Proxy(made, {
      get: function (target, key) { return get(key); },
      has: function (target, key) { return typeof key === "string" && key in at; },
      ownKeys: function () { return keys.slice(); },
      getOwnPropertyDescriptor: function (target, key) {
        if (typeof key !== "string" || !(key in at)) return undefined;
        return { value: get(key), writable: true, enumerable: true, configurable: true };
      }
    });
  }

  // lunr's Index.load, from the stored form; its results name sections by address, as the index
  // just built does.
  function loadStored(stored, refs) {
    var lunr = self.lunr;
    var tokens = new lunr.TokenSet.Builder();
    for (var i = 0; i < stored.terms.length; i++) tokens.insert(stored.terms[i]);
    tokens.finish();
    var index = new lunr.Index({
      invertedIndex: lazyTable(stored.terms, stored.postings, JSON.parse),
      fieldVectors: lazyTable(stored.vectorRefs, stored.vectors, function (text) {
        return new lunr.Vector(JSON.parse(text));
      }),
      tokenSet: tokens.root,
      fields: stored.fields,
      pipeline: lunr.Pipeline.load(stored.pipeline)
    });
    var byKey = Object.create(null);
    for (var k = 0; k < refs.length; k++) byKey[shortKey(k)] = refs[k];
    var query = index.query;
    index.query = function () {
      var results = query.apply(this, arguments);
      for (var j = 0; j < results.length; j++) results[j].ref = byKey[results[j].ref];
      return results;
    };
    return index;
  }

  // A section's words (plain words, once each) go into the index as lunr's own add would put them,
  // split as Material's tokenizer splits, through the same pipeline, but without the positions
  // (which only highlighting reads, and the words are never shown) or a token table.
  function addWords(builder, ref, words) {
    var lunr = self.lunr;
    var separator = new RegExp(lunr.tokenizer.separator, "g");
    var tokens = [];
    var start = 0;
    var match;
    do {
      match = separator.exec(words);
      var until = match ? match.index : words.length;
      if (start < until) tokens.push(new lunr.Token(words.slice(start, until).toLowerCase(), {}));
      if (match) {
        start = match.index + match[0].length;
        if (match[0].length === 0) separator.lastIndex = match.index + 1;
      }
    } while (match);
    var terms = builder.pipeline.run(tokens);
    var counts = Object.create(null);
    var fields = Object.keys(builder._fields);
    for (var i = 0; i < terms.length; i++) {
      var term = terms[i].toString();
      counts[term] = (counts[term] || 0) + 1;
      var posting = builder.invertedIndex[term];
      if (posting === undefined) {
        posting = builder.invertedIndex[term] = Object.create(null);
        posting._index = builder.termIndex++;
        for (var k = 0; k < fields.length; k++) posting[fields[k]] = Object.create(null);
      }
      posting[WORDS][ref] = posting[WORDS][ref] || Object.create(null);
    }
    var fieldRef = new lunr.FieldRef(ref, WORDS).toString();
    builder.fieldTermFrequencies[fieldRef] = counts;
    builder.fieldLengths[fieldRef] = terms.length;
  }

  // The section's words, taken off it (Material keeps the same object for its results), or null
  // where lunr's own add must see them (markup, which Material's tokenizer reads, or no such field).
  function takeWords(builder, doc) {
    var words = doc[WORDS];
    if (typeof words !== "string" || !(WORDS in builder._fields) || /[<>]/.test(words)) return null;
    delete doc[WORDS];
    return words;
  }

  // A stored index is loaded without going through the documents; Material's tokenizer must still
  // fill, for each document's fields, the table of where its words are, which highlighting reads.
  // Material registers each table as it reads a field (its extractor); the tokenizer fills it only
  // for a document in some results, just before Material reads it.
  function tableJobs(builder, doc) {
    var jobs = [];
    for (var name in builder._fields) {
      var value = builder._fields[name].extractor(doc); // registers the field's (empty) table
      if (value !== undefined) jobs.push({ table: self.lunr.tokenizer.table, name: name, value: value });
    }
    return { tokenizer: builder.tokenizer, jobs: jobs };
  }

  function tablesOnDemand(index, later) {
    var query = index.query;
    index.query = function () {
      var results = query.apply(this, arguments);
      for (var i = 0; i < results.length; i++) {
        var pending = later[results[i].ref];
        if (!pending) continue;
        delete later[results[i].ref];
        for (var j = 0; j < pending.jobs.length; j++) {
          var job = pending.jobs[j];
          self.lunr.tokenizer.table = job.table;
          pending.tokenizer(job.value, { fields: [job.name] });
        }
      }
      return results;
    };
    return index;
  }

  // Before Material builds its index: either the stored index is loaded (the tables highlighting
  // reads are filled later, tablesOnDemand), or the built one is stored once the worker has
  // answered that it is ready.
  // 4. lunr's TokenSet names a node by its edges' labels and its children's ids run together
  // (label "1" to node 23 and label "12" to node 3 both read "123"), so two different nodes can
  // be merged while the set is built: with digits among the labels (a version such as "1.0.6" in
  // the index) the set then holds words the index does not, and a query that reaches one ("5")
  // throws in Index.query and finds nothing. A separator between label and id makes names unique.
  function uniqueNodeNames(lunr) {
    lunr.TokenSet.prototype.toString = function () {
      var str = this.final ? "1" : "0"; // not kept: a node still gains edges while the set is built
      var labels = Object.keys(this.edges).sort();
      for (var i = 0; i < labels.length; i++) str += "\u0000" + labels[i] + "\u0001" + this.edges[labels[i]].id;
      return str;
    };
  }

  function prepare(data) {
    var lunr = self.lunr;
    uniqueNodeNames(lunr);
    var builder = lunr.Builder.prototype;
    var add = builder.add;
    var build = builder.build;
    function restore() {
      builder.add = add;
      builder.build = build;
    }
    builder.b = function () { this._b = LENGTH_WEIGHT; };
    builder.add = function (doc, attributes) {
      var words = takeWords(this, doc);
      add.call(this, doc, attributes);
      if (words !== null) addWords(this, doc[this._ref], words);
    };
    builder.build = function () {
      restore();
      return headingsFirst(build.call(this));
    };
    keepTitles(data.docs || []);
    var key = CACHE_VERSION + " " + digest(JSON.stringify([data.config, data.docs]));
    var refs = (data.docs || []).map(function (doc) { return doc.location; }); // Material's ref
    return database.then(function (db) {
      return previous.then(function (record) {
        if (record && record.key === key) {
          var later = Object.create(null);
          builder.add = function (doc) {
            takeWords(this, doc);
            later[doc[this._ref]] = tableJobs(this, doc);
          };
          builder.build = function () {
            restore();
            return headingsFirst(tablesOnDemand(loadStored(record.index, refs), later));
          };
        } else if (db) {
          builder.build = function () {
            restore();
            var index = build.call(this);
            setTimeout(function () {
              var stored = compact(index, refs);
              if (stored !== null) store(db, { key: key, index: stored });
            }, 500);
            return headingsFirst(index);
          };
        }
      });
    }).catch(restore);
  }

  var titles = Object.create(null); // section location -> its heading's parts between values, lower case
  var typed = ""; // the query as typed, before rewrite()

  function plain(text) {
    return String(text).replace(/<[^>]*>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
      .replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&")
      .toLowerCase().replace(/\s+/g, " ").trim();
  }

  function keepTitles(docs) {
    for (var i = 0; i < docs.length; i++) {
      var parts = plain(docs[i].title || "").split("\u2026").map(function (part) { return part.trim(); })
        .filter(function (part) { return part.length > 0; });
      if (parts.join("").length >= TITLE_MIN) titles[docs[i].location] = parts;
    }
  }

  // How much the typed text says this section's heading: its parts in order in the text, or the
  // text inside its one part; by the share of the longer that the shorter covers, so that a short,
  // generic heading ("is not supported") inside a long message counts for little.
  function titleBoost(parts, text) {
    var at = 0;
    var covered = 0;
    for (var i = 0; i < parts.length; i++) {
      at = text.indexOf(parts[i], at);
      if (at < 0) break;
      at += parts[i].length;
      covered += parts[i].length;
    }
    if (at >= 0) return 1 + TITLE_IN_QUERY * covered / text.length;
    if (parts.length === 1 && parts[0].indexOf(text) >= 0) return 1 + QUERY_IN_TITLE * text.length / parts[0].length;
    return 1;
  }

  function headingsFirst(index) {
    var search = index.search;
    index.search = function () {
      var results = search.apply(this, arguments);
      var text = plain(typed);
      if (text.length < TITLE_MIN) return results;
      for (var i = 0; i < results.length; i++) {
        var parts = titles[results[i].ref];
        if (parts) results[i].score *= titleBoost(parts, text);
      }
      return results.sort(function (a, b) { return b.score - a.score; });
    };
    return index;
  }

  // 4. On a served site the setup starts as this worker starts: it fetches the search index itself
  // (search-setup.js passed its URL) and hands it to Material's handler, which answers "ready" to
  // the page. When the page's own copy arrives, it is not built again; if it comes before this
  // worker's copy, or this setup fails, the page's copy is used as before.
  var early = null; // a promise: true once Material has answered "ready" to the early setup
  var fetched = false;
  var abandoned = false;
  var earlyOptions = {};

  function startEarly(response, suggest, onMessage) {
    earlyOptions.suggest = suggest;
    early = response
      .then(function (response) {
        if (!response.ok) throw new Error("search index: HTTP " + response.status);
        return response.json();
      })
      .then(function (data) {
        if (abandoned) return false;
        fetched = true;
        var setup = { type: SETUP, data: { config: data.config, docs: data.docs, options: earlyOptions } };
        return onMessage.call(self, { data: setup, early: true }).then(function () { return true; });
      })
      .catch(function () { return false; });
  }

  // The page's setup message: go on with it, unless the early setup has answered (or will). Then
  // "ready" is said again in answer to it: the early one may have come before Material's bundle
  // listened to this worker (a slow bundle, a busy machine, an index from the cache), and was lost.
  function afterEarly(message, go) {
    if (!early || !fetched) {
      abandoned = true;
      return go();
    }
    return early.then(function (ready) {
      if (!ready) return go();
      var options = message.data && message.data.options;
      for (var name in options) earlyOptions[name] = options[name];
      self.postMessage({ type: READY });
      return null;
    });
  }

  // Material's worker adds its message handler when it runs: wrap it as it is added.
  var listen = self.addEventListener;
  self.addEventListener = function (type, handler, options) {
    if (type !== "message") return listen.call(self, type, handler, options);
    onMessage = function (event) {
      var message = event.data;
      var that = this;
      if (message && message.type === SETUP && self.lunr) {
        var go = function () {
          return prepare(message.data).then(function () { return handler.call(that, event); });
        };
        return event.early ? go() : afterEarly(message, go);
      }
      if (message && message.type === QUERY && typeof message.data === "string") {
        typed = message.data;
        event = { data: { type: QUERY, data: rewrite(message.data) } };
      }
      return handler.call(this, event);
    };
    return listen.call(self, type, onMessage, options);
  };
  var onMessage = null;

  // The settings after "#" (search-setup.js): in the offline bundle's iframe-worker shim, this
  // script's URL, which the shim suffixes with "?" and a time stamp (the settings' own "?" are
  // escaped). "worker" is Material's worker, loaded here.
  var script = typeof document !== "undefined" && document.currentScript;
  var hash = (script ? script.src : self.location.href).split("#")[1] || "";
  var settings = new URLSearchParams(hash.split("?")[0]);
  var material = settings.get("worker");
  var index = settings.get("index");
  // the search index is fetched while Material's worker is loaded and compiled
  var response = index && typeof fetch === "function" ? fetch(index) : null;
  if (response) response.catch(function () { /* startEarly gives up on it */ });
  if (material) importScripts(material);
  if (response && onMessage && self.lunr) {
    startEarly(response, settings.get("suggest") === "1", onMessage);
  }
})();
