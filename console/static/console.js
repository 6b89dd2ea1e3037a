// memory_fabric console: the console's own small script (no library, no inline script: the
// Content-Security-Policy allows only this file). It never builds HTML from data: rows are made
// with DOM APIs and every value is set as text.
//
// Keyboard shortcuts, as in the terminal reviewer: on a candidate, a approves, r goes to the
// reject reason (type it, Enter), s skips to the next candidate; on the queue, j/k select a row
// and Enter opens it. They are ignored while typing in a field.
//
// The live queue: an EventSource on /queue/events; on "queued" (and on every (re)connection) the
// page fetches /queue/rows as JSON with its filters and inserts the rows it lacks. When the stream
// fails it says so, reconnects every 3 seconds, and goes to the sign-in page if the session ended.
"use strict";
(function () {
  function typing(e) {
    var t = e.target;
    return t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e)) return;
    var approve = document.getElementById("approve-form");
    var reason = document.getElementById("reject-reason");
    var skip = document.getElementById("skip");
    if (e.key === "a" && approve) { e.preventDefault(); approve.requestSubmit(); return; }
    if (e.key === "r" && reason) { e.preventDefault(); reason.focus(); return; }
    if (e.key === "s" && skip) { e.preventDefault(); window.location.assign(skip.getAttribute("href")); return; }
    var rows = Array.prototype.slice.call(document.querySelectorAll("#queue-rows tr.queue-row"));
    if (!rows.length) return;
    var at = rows.findIndex(function (r) { return r.classList.contains("selected"); });
    if (e.key === "j" || e.key === "k") {
      e.preventDefault();
      if (at >= 0) rows[at].classList.remove("selected");
      at = e.key === "j" ? Math.min(rows.length - 1, at + 1) : Math.max(0, at - 1);
      rows[at].classList.add("selected");
      rows[at].scrollIntoView({ block: "nearest" });
    } else if (e.key === "Enter" && at >= 0) {
      window.location.assign(rows[at].getAttribute("data-href"));
    }
  });

  function cell(tr, text, cls) {
    var td = document.createElement("td");
    if (cls) td.className = cls;
    td.textContent = text;
    tr.appendChild(td);
    return td;
  }

  function makeRow(r) {
    var tr = document.createElement("tr");
    tr.className = "queue-row new";
    tr.setAttribute("data-candidate-id", r.candidate_id);
    tr.setAttribute("data-href", r.href);
    cell(tr, r.age, "age");
    cell(tr, r.tier);
    cell(tr, r.reason, "reason");
    cell(tr, r.verdict);
    cell(tr, r.source);
    cell(tr, r.actor);
    cell(tr, r.classification);
    var td = cell(tr, "", "text");
    var a = document.createElement("a");
    a.setAttribute("href", r.href);
    a.textContent = r.text;
    td.appendChild(a);
    cell(tr, String(r.evidence), "num");
    cell(tr, r.priority, "num");
    return tr;
  }

  function live() {
    var tbody = document.getElementById("queue-rows");
    var status = document.getElementById("live-status");
    if (!tbody || !window.EventSource || !window.fetch) return;
    var es = null;
    // once the page is being left (a form posted, a link followed), the stream's end is not news:
    // signing out ends it before the next page arrives, and a refresh() then would go to the
    // sign-in page by itself, cancelling the navigation under way
    var leaving = false;
    window.addEventListener("beforeunload", function () {
      leaving = true;
      if (es) es.close();
    });

    function say(text, on) {
      if (!status) return;
      status.textContent = text;
      status.className = "live-status " + (on ? "on" : "off");
    }

    function apply(data) {
      var have = {};
      Array.prototype.forEach.call(tbody.querySelectorAll("tr.queue-row"), function (tr) {
        have[tr.getAttribute("data-candidate-id")] = tr;
      });
      var seen = {};
      var prev = null;
      var added = 0;
      data.rows.forEach(function (r) {
        seen[r.candidate_id] = true;
        var tr = have[r.candidate_id];
        if (!tr) {
          tr = makeRow(r);
          tbody.insertBefore(tr, prev ? prev.nextSibling : tbody.firstChild);
          added++;
        } else {
          tr.classList.remove("gone");
        }
        prev = tr;
      });
      Object.keys(have).forEach(function (id) {
        if (!seen[id]) have[id].classList.add("gone");
      });
      var count = document.getElementById("queue-count");
      // as the server writes it (pages.rs, queue_body): the tenant's total, and how many rows
      // the filters let through, or that only the oldest 1,000 are shown
      var n = data.rows.length;
      if (count) {
        count.textContent = data.total + " waiting in all" +
          (n >= 1000 ? "; showing the oldest " + n : n !== data.total ? "; " + n + " match the filters" : "");
      }
      var empty = document.getElementById("queue-empty");
      if (empty) empty.hidden = data.rows.length > 0;
      if (added) say("live · " + added + " new", true);
    }

    function refresh() {
      if (leaving) return;
      fetch("/queue/rows" + window.location.search, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (resp) {
          // the session ended (signed out elsewhere, expired, the role's password changed): show
          // the sign-in page with its reason
          if (resp.redirected && /\/signin(\?|$)/.test(resp.url)) { window.location.assign(resp.url); throw new Error("signed out"); }
          if (!resp.ok) throw new Error("status " + resp.status);
          return resp.json();
        })
        .then(apply)
        .catch(function () { /* the next event or reconnection tries again */ });
    }

    function connect() {
      es = new EventSource("/queue/events");
      es.addEventListener("ready", function () { say("live", true); refresh(); });
      es.addEventListener("queued", refresh);
      es.onerror = function () {
        if (leaving) return;
        say("live updates paused — reconnecting", false);
        es.close();
        // the stream also fails when the session has ended (the events URL then redirects to the
        // sign-in page): a fetch of the rows tells, and goes there
        refresh();
        window.setTimeout(connect, 3000);
      };
    }
    connect();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", live);
  else live();
})();
