// rave's embed for shops' product pages:
//   <div data-rave-product="42"></div>
//   <script src="https://comments.example/embed.js" async></script>
// renders the product's comments (histogram, average, filters, the order,
// "load more", helpful votes, photos and their viewer, the post form with
// up to 5 photos) in a shadow root, apart from
// the page's styles (data-rave-group="tee": its family's). Votes are cast
// as a browser's random voter id, or the shop's: data-rave-voter="c-7".
// Theme it from the page with custom properties on the host element:
// --rave-font, --rave-text, --rave-muted, --rave-accent,
// --rave-background, --rave-border, --rave-radius.
// User text only ever goes in through textContent.
(() => {
  "use strict";
  const script = document.currentScript;
  const api = new URL(script ? script.src : location.href).origin;
  const PAGE = 20;
  const MAX_PHOTOS = 5;
  // [[value, label]] of the orders, filled in by the server.
  const SORTS = RAVE_SORTS;

  const STYLE = `
:host{all:initial;display:block}
*{box-sizing:border-box;margin:0;padding:0;font:inherit;color:inherit;line-height:inherit}
.rave{all:initial;display:grid;gap:.75rem;font:15px/1.5 var(--rave-font,system-ui,sans-serif);
  color:var(--rave-text,#1d1d1f);background:var(--rave-background,transparent)}
h2{font-size:1.25em;font-weight:700}
.summary{font-size:1.1em}.average{font-weight:700}
.histogram{display:grid;grid-template-columns:auto 1fr auto;gap:.25rem .5rem;align-items:center;max-width:24rem}
.bar{height:.6rem;background:var(--rave-border,#ddd);border-radius:var(--rave-radius,4px);overflow:hidden}
.bar span{display:block;height:100%;background:var(--rave-accent,#b36b00)}
.filters,.form{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
select,input,textarea,button{border:1px solid var(--rave-border,#ccc);border-radius:var(--rave-radius,4px);
  padding:.3rem .5rem;background:#fff}
button{background:var(--rave-accent,#b36b00);color:#fff;border-color:transparent;cursor:pointer}
button:disabled{opacity:.6;cursor:wait}
label{display:flex;gap:.25rem;align-items:center}
ol{list-style:none;display:grid;gap:.5rem}
li{border-top:1px solid var(--rave-border,#ddd);padding-top:.5rem}
h3{font-weight:600}.meta{color:var(--rave-muted,#555);font-size:.9em}.stars{color:var(--rave-accent,#b36b00)}
.body{white-space:pre-line}
.reply{margin-left:1rem;padding-left:.75rem;border-left:3px solid var(--rave-border,#ddd)}
.verified{color:var(--rave-accent,#b36b00);font-weight:600;margin-left:.5rem}
.votes{display:flex;gap:.5rem;margin-top:.25rem}
.votes button{background:transparent;color:inherit;border-color:var(--rave-border,#ccc);font-size:.9em}
.votes button[aria-pressed=true]{background:var(--rave-accent,#b36b00);color:#fff}
.form{display:grid;gap:.4rem;max-width:32rem}
.error{color:#b00020;font-size:.9em}.notice{color:var(--rave-muted,#555)}
.photos{display:flex;flex-wrap:wrap;gap:.4rem;margin-top:.25rem}
.photo{padding:0;background:none;border:1px solid var(--rave-border,#ddd)}
.photo img{display:block;height:5rem;width:auto}
dialog{margin:auto;border:0;border-radius:var(--rave-radius,4px);padding:.5rem;background:#fff}
dialog img{display:block;max-width:90vw;max-height:80vh;width:auto;height:auto}
dialog::backdrop{background:#000b}
dialog p{display:flex;gap:.5rem;align-items:center;justify-content:center;margin-top:.5rem}
[hidden]{display:none}`;

  function el(tag, props, children) {
    const node = document.createElement(tag);
    Object.assign(node, props || {});
    for (const child of children || []) node.append(child);
    return node;
  }

  // "runs_small" read as "Runs small".
  function label(name) {
    const words = String(name).replace(/_/g, " ");
    return words[0].toUpperCase() + words.slice(1);
  }

  // A bar filled to `share` (0 to 1) through the style object: the pages'
  // policy allows no style attribute.
  function bar(share) {
    const node = el("div", { className: "bar" }, [el("span")]);
    node.firstChild.style.width = 100 * share + "%";
    return node;
  }

  // rave's own photo paths are relative: they are on the API's origin.
  function resolve(url) {
    return new URL(url, api).href;
  }

  function stars(rating) {
    return "★★★★★☆☆☆☆☆".slice(5 - rating, 10 - rating);
  }

  // crypto.randomUUID needs https; not every shop has it.
  function randomId() {
    return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // Where local storage is refused, the voter lasts as long as the page.
  const memory = new Map();
  const stored = {
    get(key) { try { return localStorage.getItem(key); } catch { return memory.get(key) ?? null; } },
    set(key, value) { try { localStorage.setItem(key, value); } catch { memory.set(key, value); } },
  };
  function storedVoter() {
    let id = stored.get("rave-voter");
    if (!id) { id = randomId(); stored.set("rave-voter", id); }
    return id;
  }

  async function call(path, options) {
    const response = await fetch(api + path, options);
    const body = await response.json().catch(() => null);
    if (!response.ok) throw Object.assign(new Error((body && body.detail) || response.statusText), { problem: body || {} });
    return body;
  }

  function mount(host) {
    const product = host.getAttribute("data-rave-product");
    const base = "/v1/products/" + encodeURIComponent(product);
    const g = host.getAttribute("data-rave-group");
    const at = g ? "/v1/groups/" + encodeURIComponent(g) : base;
    const voter = host.getAttribute("data-rave-voter") || storedVoter();
    // The voter's votes: {comment id: helpful}.
    const votesKey = "rave-votes-" + voter;
    function myVotes() {
      try { return JSON.parse(stored.get(votesKey)) || {}; } catch { return {}; }
    }
    const root = host.attachShadow({ mode: "open" });
    root.append(el("style", { textContent: STYLE }));

    const average = el("span", { className: "average" });
    const count = el("span", { className: "count" });
    const histogram = el("div", { className: "histogram" });
    const attributes = el("div", { className: "histogram" });
    const language = el("select", { name: "language" }, [el("option", { value: "", textContent: "All languages" })]);
    const ratingFilter = el("select", { name: "rating" }, [el("option", { value: "", textContent: "All ratings" })]);
    for (let r = 5; r >= 1; r--) ratingFilter.append(el("option", { value: String(r), textContent: stars(r) }));
    const sort = el("select", { name: "sort" }, SORTS.map(([value, label]) => el("option", { value, textContent: label })));
    const verified = el("input", { type: "checkbox", name: "verified" });
    const list = el("ol", { className: "comments" });
    const empty = el("p", { className: "notice", textContent: "No comments yet.", hidden: true });
    const more = el("button", { type: "button", className: "more", textContent: "Load more", hidden: true });
    const listError = el("p", { className: "error", hidden: true });

    const fields = {};
    const errors = {};
    function field(name, input, label) {
      fields[name] = input;
      errors[name] = el("span", { className: "error", hidden: true });
      errors[name].dataset.field = name;
      return el("label", {}, [label, input, errors[name]]);
    }
    const ratingInput = el("select", { name: "rating" });
    for (let r = 5; r >= 1; r--) ratingInput.append(el("option", { value: String(r), textContent: stars(r) }));
    const languageInput = el("input", { name: "language", value: (document.documentElement.lang || "en").slice(0, 2).toLowerCase(), size: 3 });
    // Photos to post, previewed from object URLs (nothing is sent before
    // Post); a thumbnail removes its photo.
    const photoInput = el("input", { type: "file", name: "photo", accept: "image/jpeg,image/png,image/webp", multiple: true });
    const previews = el("div", { className: "photos" });
    let chosen = [];
    function showChosen() {
      previews.replaceChildren(...chosen.map((c, n) => {
        const remove = el("button", { type: "button", className: "photo" }, [el("img", { src: c.url, alt: "Remove photo " + (n + 1) + ", " + c.file.name })]);
        remove.addEventListener("click", () => { URL.revokeObjectURL(c.url); chosen.splice(n, 1); showChosen(); });
        return remove;
      }));
    }
    function clearChosen() {
      for (const c of chosen) URL.revokeObjectURL(c.url);
      chosen = [];
      showChosen();
    }
    // What the product asks (its own declaration, else its group's), as
    // optional selects.
    const asked = el("div", { className: "asked" });
    const submit = el("button", { type: "submit", textContent: "Post" });
    const formError = el("p", { className: "error", hidden: true });
    const notice = el("p", { className: "notice", hidden: true });
    const form = el("form", { className: "form" }, [
      field("author", el("input", { name: "author" }), "Name"),
      field("language", languageInput, "Language"),
      field("rating", ratingInput, "Rating"),
      field("title", el("input", { name: "title" }), "Title"),
      field("body", el("textarea", { name: "body", rows: 3 }), "Comment"),
      asked,
      field("photo", photoInput, "Photos (up to " + MAX_PHOTOS + ")"), previews,
      submit, formError, notice,
    ]);

    root.append(el("section", { className: "rave" }, [
      el("h2", { textContent: "Customer reviews" }),
      el("p", { className: "summary" }, [average, " out of 5 · ", count, " reviews"]),
      histogram,
      attributes,
      el("div", { className: "filters" }, [language, ratingFilter, sort, el("label", {}, [verified, "Verified purchases only"])]),
      list, empty, listError, more,
      el("h2", { textContent: "Write a review" }), form,
    ]));

    photoInput.addEventListener("change", () => {
      errors.photo.hidden = true;
      for (const file of photoInput.files) {
        if (chosen.length === MAX_PHOTOS) {
          errors.photo.textContent = "At most " + MAX_PHOTOS + " photos";
          errors.photo.hidden = false;
          break;
        }
        chosen.push({ file, url: URL.createObjectURL(file) });
      }
      photoInput.value = "";
      showChosen();
    });

    const shown = new Set();
    let cursor = null;
    // Every listing request takes a number; only the newest may change the list.
    let sequence = 0;

    // Pressing a button casts (or replaces) this browser's vote, pressing it
    // again withdraws it; the counts add a vote the listing had not counted.
    function voteButtons(c) {
      const counted = myVotes()[c.id];
      const counts = { true: c.helpful_votes, false: c.unhelpful_votes };
      const buttons = [true, false].map((helpful) => {
        const button = el("button", { type: "button" });
        button.dataset.helpful = String(helpful);
        button.addEventListener("click", () => vote(helpful));
        return button;
      });
      function show() {
        const mine = myVotes()[c.id];
        for (const button of buttons) {
          const helpful = button.dataset.helpful === "true";
          const n = counts[helpful] - (counted === helpful ? 1 : 0) + (mine === helpful ? 1 : 0);
          button.textContent = (helpful ? "Helpful" : "Not helpful") + " (" + Math.max(n, 0) + ")";
          button.setAttribute("aria-pressed", String(mine === helpful));
        }
      }
      async function vote(helpful) {
        const votes = myVotes();
        const withdraw = votes[c.id] === helpful;
        const path = "/v1/comments/" + encodeURIComponent(c.id) + "/votes/" + encodeURIComponent(voter);
        for (const button of buttons) button.disabled = true;
        try {
          if (withdraw) await call(path, { method: "DELETE" });
          else await call(path, { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ helpful }) });
          if (withdraw) delete votes[c.id]; else votes[c.id] = helpful;
          stored.set(votesKey, JSON.stringify(votes));
          show();
          listError.hidden = true;
        } catch (e) {
          listError.textContent = e.message;
          listError.hidden = false;
        } finally {
          for (const button of buttons) button.disabled = false;
        }
      }
      show();
      return el("div", { className: "votes" }, buttons);
    }

    // Sub-ratings as bars of their average, a choice (fit) as a scale of
    // its choices in the declared order (a family's view: the group's);
    // each comment's answers.
    let declared = [], asks = [];
    function showAttributes(stats, shown, product) {
      asks = product;
      declared = shown.concat(asks.filter((a) => !shown.some((s) => s.name === a.name)));
      if (!asked.childElementCount) {
        for (const a of asks) {
          const select = el("select", { name: "attributes." + a.name }, [el("option", { value: "", textContent: "—" })]);
          for (const value of a.kind === "rating" ? ["5", "4", "3", "2", "1"] : a.choices) {
            select.append(el("option", { value, textContent: a.kind === "rating" ? stars(Number(value)) : label(value) }));
          }
          asked.append(field("attributes." + a.name, select, label(a.name)));
        }
      }
      attributes.replaceChildren();
      for (const a of shown) {
        const s = stats.attributes[a.name];
        if (!s) continue;
        const rows = a.kind === "rating" ? [[label(a.name), s.average / 5, s.average.toFixed(1)]]
          : a.choices.map((c) => [label(a.name) + ": " + label(c), (s.distribution[c] || 0) / s.count, s.distribution[c] || 0]);
        for (const [text, share, value] of rows) attributes.append(el("span", { textContent: text }), bar(share), el("span", { textContent: value }));
      }
    }
    function answers(c) {
      const text = declared.filter((a) => a.name in c.attributes)
        .map((a) => label(a.name) + ": " + (a.kind === "rating" ? c.attributes[a.name] + "/5" : label(c.attributes[a.name]))).join(" · ");
      return text ? [el("p", { className: "meta", textContent: text })] : [];
    }

    // The photo viewer: a modal dialog (focus moves in, the page behind is
    // inert, Escape closes it), arrow keys for a comment's other photos,
    // and focus back on the thumbnail it opened from.
    const source = el("source", { type: "image/webp" });
    const big = el("img");
    const counter = el("span");
    const prev = el("button", { type: "button", textContent: "‹ Previous" });
    const next = el("button", { type: "button", textContent: "Next ›" });
    const close = el("button", { type: "button", textContent: "Close" });
    const viewer = el("dialog", { className: "viewer" }, [el("picture", {}, [source, big]), el("p", {}, [prev, counter, next, close])]);
    root.querySelector("section").append(viewer);
    let viewing = null;
    function view(n) {
      const { photos, author } = viewing;
      viewing.n = (n + photos.length) % photos.length;
      const p = photos[viewing.n];
      const name = "Photo " + (viewing.n + 1) + " of " + photos.length + " by " + author;
      source.srcset = resolve(p.url);
      Object.assign(big, { src: resolve(p.fallback_url), width: p.width, height: p.height, alt: name });
      viewer.setAttribute("aria-label", name);
      counter.textContent = viewing.n + 1 + " / " + photos.length;
      prev.hidden = next.hidden = photos.length < 2;
    }
    prev.addEventListener("click", () => view(viewing.n - 1));
    next.addEventListener("click", () => view(viewing.n + 1));
    close.addEventListener("click", () => viewer.close());
    viewer.addEventListener("keydown", (e) => {
      const step = { ArrowLeft: -1, ArrowRight: 1 }[e.key];
      if (step && viewing.photos.length > 1) { e.preventDefault(); view(viewing.n + step); }
    });
    viewer.addEventListener("close", () => viewing.opener.focus());

    // A comment's published photos as thumbnails that open the viewer.
    function photos(c) {
      const list = (c.media || []).filter((p) => p.status === "published");
      if (!list.length) return [];
      return [el("div", { className: "photos" }, list.map((p, n) => {
        const img = el("img", { src: resolve(p.thumbnail_fallback_url), width: p.width, height: p.height, loading: "lazy",
          alt: "Photo " + (n + 1) + " of " + list.length + " by " + c.author });
        const opener = el("button", { type: "button", className: "photo" }, [
          el("picture", {}, [el("source", { type: "image/webp", srcset: resolve(p.thumbnail_url) }), img])]);
        opener.addEventListener("click", () => {
          viewing = { photos: list, author: c.author, opener };
          view(n);
          viewer.showModal();
          close.focus();
        });
        return opener;
      }))];
    }

    function comment(c) {
      return el("li", { className: "comment", lang: c.language }, [
        el("h3", { className: "title" }, [el("bdi", { textContent: c.title || c.body.slice(0, 80) })]),
        el("p", { className: "meta" }, [
          el("span", { className: "stars", textContent: stars(c.rating) }), " by ",
          el("bdi", { className: "author", textContent: c.author }), " on ",
          el("time", { dateTime: c.created_at, textContent: c.created_at.slice(0, 10) }),
          ...(c.verified_purchase ? [el("span", { className: "verified", textContent: "✓ Verified purchase" })] : []),
          ...(c.incentivized ? [" · Received a free product or discount for this review"] : []),
        ]),
        ...answers(c),
        el("p", { className: "body", dir: "auto" }, [el("bdi", { textContent: c.body })]),
        ...photos(c),
        ...(c.reply ? [el("div", { className: "reply" }, [
          el("p", { className: "meta" }, ["Reply from the shop on ",
            el("time", { dateTime: c.reply.updated_at, textContent: c.reply.updated_at.slice(0, 10) })]),
          el("p", { className: "body", dir: "auto" }, [el("bdi", { textContent: c.reply.body })]),
        ])] : []),
        voteButtons(c),
      ]);
    }

    async function loadStats() {
      const [info, own, group] = await Promise.all([call(g ? at + "/stats" : base), g && call(base), g && call("/v1/products/" + encodeURIComponent(g))]);
      const stats = info.stats;
      average.textContent = stats.average === null ? "–" : stats.average.toFixed(2);
      count.textContent = String(stats.total);
      histogram.replaceChildren();
      for (let r = 5; r >= 1; r--) {
        const n = stats.counts[String(r)];
        histogram.append(el("span", { textContent: stars(r) }), bar(stats.total ? n / stats.total : 0), el("span", { textContent: String(n) }));
      }
      const chosen = language.value;
      language.replaceChildren(el("option", { value: "", textContent: "All languages" }));
      for (const l of info.languages || []) language.append(el("option", { value: l.language, textContent: l.language + " (" + l.total + ")" }));
      language.value = chosen;
      showAttributes(info.stats, (group || info).effective_attributes, (own || info).effective_attributes);
    }

    async function load(reset) {
      const mine = ++sequence;
      more.disabled = true;
      const query = new URLSearchParams({ limit: String(PAGE) });
      if (language.value) query.set("language", language.value);
      if (ratingFilter.value) query.set("rating", ratingFilter.value);
      if (sort.value !== "newest") query.set("sort", sort.value);
      if (verified.checked) query.set("verified", "true");
      if (!reset && cursor) query.set("cursor", cursor);
      try {
        const page = await call(at + "/comments?" + query);
        if (mine !== sequence) return;
        if (reset) { list.replaceChildren(); shown.clear(); }
        for (const c of page.items) {
          if (shown.has(c.id)) continue;
          shown.add(c.id);
          list.append(comment(c));
        }
        cursor = page.next_cursor;
        more.hidden = !cursor;
        empty.hidden = shown.size > 0;
        listError.hidden = true;
      } catch (e) {
        if (mine !== sequence) return;
        listError.textContent = e.message;
        listError.hidden = false;
      } finally {
        if (mine === sequence) more.disabled = false;
      }
    }

    language.addEventListener("change", () => load(true));
    ratingFilter.addEventListener("change", () => load(true));
    sort.addEventListener("change", () => load(true));
    verified.addEventListener("change", () => load(true));
    more.addEventListener("click", () => { if (!more.disabled) load(false); });

    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      for (const name in errors) { errors[name].hidden = true; errors[name].textContent = ""; }
      formError.hidden = true;
      notice.hidden = true;
      submit.disabled = true;
      const body = {
        author: fields.author.value, language: fields.language.value,
        rating: Number(fields.rating.value), title: fields.title.value, body: fields.body.value,
        attributes: {},
      };
      for (const a of asks) {
        const value = fields["attributes." + a.name].value;
        if (value) body.attributes[a.name] = a.kind === "rating" ? Number(value) : value;
      }
      // With photos, multipart/form-data: the JSON as part "comment", each
      // file as a part "photo" (the browser sets the boundary).
      const request = { method: "POST", headers: { "Idempotency-Key": randomId() } };
      if (chosen.length) {
        request.body = new FormData();
        request.body.append("comment", new Blob([JSON.stringify(body)], { type: "application/json" }));
        for (const c of chosen) request.body.append("photo", c.file);
      } else {
        request.headers["Content-Type"] = "application/json";
        request.body = JSON.stringify(body);
      }
      try {
        const created = await call(base + "/comments", request);
        fields.title.value = "";
        fields.body.value = "";
        clearChosen();
        if (created.status === "pending") {
          notice.textContent = "Thank you: your comment appears once a moderator approves it.";
          notice.hidden = false;
        } else if (sort.value !== "newest" || verified.checked) {
          // Its place in this order or filter is for the list to say.
          notice.textContent = "Thank you: your comment is posted.";
          notice.hidden = false;
        } else if (!shown.has(created.id)) {
          shown.add(created.id);
          list.prepend(comment(created));
          empty.hidden = true;
        }
      } catch (e) {
        // A refused photo is named as its part ("photo[2]").
        const target = errors[String(e.problem.field).replace(/\[.*/, "")];
        if (target) { target.textContent = e.message; target.hidden = false; }
        else { formError.textContent = e.message; formError.hidden = false; }
      } finally {
        submit.disabled = false;
      }
    });

    loadStats().catch((e) => { listError.textContent = e.message; listError.hidden = false; });
    load(true);
  }

  function start() {
    for (const host of document.querySelectorAll("[data-rave-product]")) {
      if (!host.shadowRoot) mount(host);
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
