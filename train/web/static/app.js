// The web table's page: everything it shows comes from the JSON API (train/web/app.py).
"use strict";

const $ = (id) => document.getElementById(id);
const RED_FRENCH = new Set(["h", "d"]);  // hearts, diamonds
const RED_SPANISH = new Set(["o", "c"]);  // oros, copas ("c" is clubs in the French deck)
const FRENCH = { c: "♣", d: "♦", h: "♥", s: "♠" };
let mode = "play";      // the tab: play, watch, replay
let game = null;        // the last view the server sent
let variants = [];
let levels = [];
let timer = null;       // the watch mode's next step
let paused = false;
let fileGames = null;   // how many games the opened file holds, and which one is shown

async function api(method, path, body, raw) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["content-type"] = "application/json";
    opts.body = raw ? body : JSON.stringify(body);
  }
  const response = await fetch(path, opts);
  let data;
  try { data = await response.json(); } catch (e) { data = { error: `the server answered ${response.status}` }; }
  if (!response.ok) {
    const err = new Error(data.error || response.statusText);
    err.status = response.status;
    throw err;
  }
  return data;
}

function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.hidden = !message;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function cardNode(card, extra) {
  if (!card) return el("div", { class: "card back", title: "hidden" });
  const french = FRENCH[card.suit] && !card.name.includes(" de ");
  const suit = french ? el("span", { class: "suit" }, FRENCH[card.suit])
    : el("span", { class: "suit word" }, card.name.split(" de ")[1] || card.suit);
  const rank = french ? card.name.slice(0, -1) : card.rank;
  const red = (french ? RED_FRENCH : RED_SPANISH).has(card.suit);
  const node = el("div", { class: "card" + (red ? " red" : "") + (extra ? " " + extra : ""),
                           title: card.name, "data-card": card.code },
                  el("span", { class: "rank" }, rank), suit);
  return node;
}

// ------------------------------------------------------------------ setup
function currentVariant() { return variants.find((v) => v.name === $("variant").value); }

function gameOptions() {
  let options = {};
  const text = $("options").value.trim();
  if (text) {
    try { options = JSON.parse(text); } catch (e) { throw new Error(`Options is not valid JSON: ${e.message}`); }
    if (typeof options !== "object" || Array.isArray(options) || options === null)
      throw new Error("Options must be a JSON object, e.g. {\"target\": 6}");
  }
  if (!$("players-box").hidden) options.players = Number($("players").value);
  return options;
}

function fillVariants() {
  const select = $("variant");
  select.replaceChildren(...variants.map((v) => el("option", { value: v.name, title: v.summary },
                                                    v.summary.split(":")[0])));
  select.value = variants.some((v) => v.name === "truco_paulista") ? "truco_paulista" : variants[0].name;
  fillPlayers();
}

function fillPlayers() {
  const v = currentVariant();
  const spec = v.options.players;
  $("players-box").hidden = !spec;
  if (spec) {
    $("players").replaceChildren(...spec.allowed.map((n) => el("option", { value: n }, String(n))));
    $("players").value = spec.default;
  }
  refreshLevels();
}

async function refreshLevels() {
  let options;
  try { options = gameOptions(); } catch (e) { showError(e.message); return; }
  try {
    const q = new URLSearchParams({ variant: $("variant").value, options: JSON.stringify(options) });
    const data = await api("GET", `/api/levels?${q}`);
    levels = data.levels;
    showError("");
    fillSeats(data.players, data.partnership);
  } catch (e) { showError(e.message); }
}

function levelSelect(id, chosen) {
  const select = el("select", { id });
  for (const level of levels)
    select.append(el("option", { value: level.name, title: level.about }, `${level.name} (${level.kind})`));
  select.value = levels.some((l) => l.name === chosen) ? chosen : "honest";
  return select;
}

function fillSeats(players, partnership) {
  const you = $("you-seat");
  const keep = Number(you.value || 0);
  you.replaceChildren(...Array.from({ length: players }, (_, s) => el("option", { value: s }, `seat ${s}`)));
  you.value = keep < players ? keep : 0;
  const me = Number(you.value);
  const box = $("seat-choices");
  box.replaceChildren();
  for (let s = 0; s < players; s++) {
    if (mode === "play" && s === me) continue;
    let role = "";
    if (mode === "play") role = partnership && (s - me) % 2 === 0 ? " (partner)" : " (opponent)";
    box.append(el("label", {}, `seat ${s}${role}`, levelSelect(`seat-${s}`, "honest")));
  }
  const advisor = $("advisor");
  advisor.replaceChildren(el("option", { value: "" }, "none"));
  for (const level of levels.filter((l) => l.kind !== "heuristic"))
    advisor.append(el("option", { value: level.name }, level.name));
}

async function startGame(event) {
  event.preventDefault();
  stopWatch();
  try {
    const options = gameOptions();
    const players = $("you-seat").options.length;
    const me = Number($("you-seat").value);
    const seats = [];
    for (let s = 0; s < players; s++)
      seats.push(mode === "play" && s === me ? "you" : $(`seat-${s}`).value);
    const body = { variant: $("variant").value, options, seats, seed: Number($("seed").value || 0) };
    if (mode === "play" && $("advisor").value) body.advisor = $("advisor").value;
    const view = await api("POST", "/api/games", body);
    fillViewer(view.players);
    showError("");
    show(view);
    if (mode === "watch") { paused = false; $("pause").textContent = "Pause"; scheduleStep(); }
  } catch (e) { showError(e.message); }
}

async function openRecord(event) {
  event.preventDefault();
  const file = $("record-file").files[0];
  if (!file) { showError("Choose a record file (a JSON record or an arena games.jsonl) first."); return; }
  try {
    const text = await file.text();
    const view = await api("POST", `/api/replays?game=${Number($("record-game").value || 0)}`, text, true);
    fileGames = view.games > 1 ? ` · game ${view.game} of 0..${view.games - 1} in the file` : "";
    fillViewer(view.players);
    showError("");
    show(view);
  } catch (e) { showError(e.message); }
}

function fillViewer(players) {
  const select = $("viewer");
  const keep = select.value;
  select.replaceChildren(el("option", { value: "all" }, "every hand"),
    ...Array.from({ length: players }, (_, s) => el("option", { value: s }, `seat ${s}'s view`)));
  select.value = [...select.options].some((o) => o.value === keep) ? keep : "all";
}

// ------------------------------------------------------------------ the table
function viewerQuery() {
  return game && game.mode !== "play" ? `?viewer=${$("viewer").value}` : "";
}

async function refresh(extra) {
  if (!game) return;
  const sep = viewerQuery() ? "&" : "?";
  show(await api("GET", `/api/games/${game.id}${viewerQuery()}${extra ? sep + extra : ""}`));
}

function sideName(g, side) {
  if (g.viewer === null || g.viewer === undefined || g.n_sides !== 2) return `side ${side}`;
  const mine = g.seats[g.viewer].side === side;
  return g.partnership ? (mine ? "your side" : "their side") : (mine ? "you" : "them");
}

function show(g) {
  game = g;
  document.body.dataset.mode = g.mode;
  document.body.dataset.version = g.version;  // what the page shows (tests wait on it)
  document.body.dataset.at = g.at ?? "";
  location.hash = `game=${g.id}`;
  const status = $("status");
  status.replaceChildren(
    ...g.score.map((p, side) => el("span", { class: `side${side % 2}` }, `${sideName(g, side)} ${p}`)),
    el("span", {}, `target ${g.target}`),
    el("span", {}, `hand ${g.hand}, trick ${Math.min(g.trick, g.hand_size)} of ${g.hand_size}`),
    el("span", { id: "stake" }, `stake ${g.stake}`),
    el("span", { class: "muted" }, g.variant));
  drawSeats(g);
  drawCenter(g);
  drawCalls(g);
  drawActions(g);
  drawPolicy(g.policy, g);
  drawLog(g.log);
  const save = $("save");
  save.hidden = false;
  save.href = `/api/games/${g.id}/record`;
  if (g.mode === "replay") {
    $("cursor").max = g.length;
    $("cursor").value = g.at;
    $("position").textContent = `decision ${g.at} of ${g.length}${fileGames || ""}`;
  }
}

function drawSeats(g) {
  const felt = $("felt");
  felt.querySelectorAll(".seat").forEach((n) => n.remove());
  felt.classList.toggle("small-cards", g.hand_size > 3 || g.players > 4);  // put_n: long hands, many seats
  const bottom = g.viewer ?? g.human ?? 0;
  const playable = new Map(g.legal.filter((a) => a.code.startsWith("play ") && !a.code.startsWith("play slot"))
    .map((a) => [a.code.slice(5), a.id]));
  for (const seat of g.seats) {
    const rel = (seat.seat - bottom + g.players) % g.players;
    const angle = Math.PI / 2 - (2 * Math.PI * rel) / g.players;  // play goes counter-clockwise
    const x = 50 + 41 * Math.cos(angle), y = 50 + 38 * Math.sin(angle);
    const hand = el("div", { class: "hand" });
    if (seat.hand) {
      for (const card of seat.hand) {
        const id = playable.get(card.code);
        const node = cardNode(card, id !== undefined ? "playable" : "");
        if (id !== undefined) node.addEventListener("click", () => act(id));
        hand.append(node);
      }
    } else {
      for (let k = 0; k < seat.cards; k++) hand.append(cardNode(null));
    }
    const who = el("div", { class: "who" }, seat.seat === g.human || !seat.name ? seat.label : `${seat.label} · ${seat.name}`);
    if (seat.dealer) who.append(el("span", { class: "chip", title: "dealer" }, "D"));
    const node = el("div", { class: "seat" + (seat.seat === g.to_act ? " turn" : "") + (seat.active ? "" : " out"),
                             "data-seat": seat.seat, style: `left:${x}%;top:${y}%` }, who, hand);
    felt.append(node);
  }
}

function drawCenter(g) {
  $("vira-box").replaceChildren(...(g.vira ? [el("div", {}, "vira"), cardNode(g.vira)] : []));
  $("trick").replaceChildren(...g.table.map((t) => el("figure", {}, cardNode(t.card), el("figcaption", {},
    g.seats[t.seat].label))));
  const last = g.last_trick.length ? [el("span", {}, "last trick")] : [];
  for (const t of g.last_trick) last.push(el("figure", {}, cardNode(t.card, t.won ? "won" : ""), el("figcaption", {},
    `seat ${t.seat}`)));
  $("last-trick").replaceChildren(...last);
}

function drawCalls(g) {
  const items = g.pending.map((p) => el("span", { class: "call" }, `${g.seats[p.seat].label} calls ${p.call}`));
  for (const s of g.signals)
    items.push(el("span", { class: "call signal" }, `${g.seats[s.seat].label} signals ${s.token ?? "(unseen)"}`));
  if (g.instruction) items.push(el("span", { class: "call" }, `instruction: ${g.instruction}`));
  if (g.special) items.push(el("span", { class: "call" }, `${g.special} hand`));
  $("calls").replaceChildren(...items);
}

function drawActions(g) {
  const box = $("actions");
  box.replaceChildren();
  if (g.over) {
    const won = g.viewer !== null && g.viewer !== undefined ? g.seats[g.viewer].side === g.winner : null;
    box.append(el("span", { class: "over" },
      won === null ? `Game over: side ${g.winner} wins.` : (won ? "Game over: you win!" : "Game over: you lose.")));
    return;
  }
  for (const a of g.legal)
    box.append(el("button", { type: "button", "data-action": a.id, "data-code": a.code, onclick: () => act(a.id) },
                  a.label));
  if (g.mode === "replay") box.append(el("span", { class: "muted" }, "← → step through the game"));
}

function drawPolicy(policy, g) {
  const box = $("policy");
  if (!policy) {
    box.replaceChildren(el("p", { class: "muted" }, "Shown for a network or a strategy table at its decision."));
    return;
  }
  box.replaceChildren(el("p", { class: "muted" }, `${policy.by} at seat ${policy.seat}'s decision:`),
    ...policy.actions.map((a) => el("div", { class: "bar" }, el("span", {}, a.label),
      el("div", { style: `width:${(100 * a.p).toFixed(1)}%` }), el("span", {}, `${(100 * a.p).toFixed(1)}%`))));
}

function drawLog(lines) {
  const log = $("log");
  log.replaceChildren(...lines.map((line) => el("li", {
    class: line.startsWith("---") ? "hand" : line.startsWith("==") ? "result" : "" }, line.trim())));
  log.parentElement.scrollTop = log.parentElement.scrollHeight;
}

async function act(id) {
  if (!game) return;
  const version = game.version;
  document.querySelectorAll("#actions button").forEach((b) => { b.disabled = true; });
  try {
    show(await api("POST", `/api/games/${game.id}/action`, { action: id, version }));
    showError("");
  } catch (e) {
    showError(e.message);
    try { await refresh(); } catch (e2) { /* the first message says it */ }
  }
}

// ------------------------------------------------------------------ watch and replay
function stopWatch() { if (timer) clearTimeout(timer); timer = null; }

function scheduleStep() {
  stopWatch();
  if (!game || game.mode !== "watch" || game.over || paused) return;
  timer = setTimeout(stepOnce, Number($("speed").value));
}

async function stepOnce() {
  if (!game || game.mode !== "watch" || game.over) return;
  try {
    show(await api("POST", `/api/games/${game.id}/step${viewerQuery()}`, { version: game.version }));
  } catch (e) { showError(e.message); await refresh(); }
  scheduleStep();
}

async function goTo(at) {
  if (!game || game.mode !== "replay") return;
  at = Math.max(0, Math.min(game.length, at));
  try { await refresh(`at=${at}`); showError(""); } catch (e) { showError(e.message); }
}

function switchTab(newMode) {
  mode = newMode;
  document.querySelectorAll(".tab").forEach((t) => t.classList.toggle("on", t.dataset.mode === mode));
  document.body.dataset.mode = mode;
  $("new-game").hidden = mode === "replay";
  $("replay-form").hidden = mode !== "replay";
  $("start").textContent = mode === "watch" ? "Watch a game" : "New game";
  if (mode !== "replay") refreshLevels();
}

async function init() {
  document.querySelectorAll(".tab").forEach((t) => t.addEventListener("click", () => switchTab(t.dataset.mode)));
  $("variant").addEventListener("change", fillPlayers);
  $("players").addEventListener("change", refreshLevels);
  $("options").addEventListener("change", refreshLevels);
  $("you-seat").addEventListener("change", refreshLevels);
  $("new-game").addEventListener("submit", startGame);
  $("replay-form").addEventListener("submit", openRecord);
  $("viewer").addEventListener("change", () => refresh(game && game.mode === "replay" ? `at=${game.at}` : ""));
  $("speed").addEventListener("input", () => { $("speed-ms").textContent = `${$("speed").value} ms`; });
  $("pause").addEventListener("click", () => {
    paused = !paused;
    $("pause").textContent = paused ? "Resume" : "Pause";
    scheduleStep();
  });
  $("step").addEventListener("click", () => { paused = true; $("pause").textContent = "Resume"; stepOnce(); });
  $("back").addEventListener("click", () => goTo(game.at - 1));
  $("forward").addEventListener("click", () => goTo(game.at + 1));
  $("cursor").addEventListener("change", () => goTo(Number($("cursor").value)));
  document.addEventListener("keydown", (e) => {
    if (!game || game.mode !== "replay" || e.target.tagName === "INPUT") return;
    if (e.key === "ArrowLeft") goTo(game.at - 1);
    if (e.key === "ArrowRight") goTo(game.at + 1);
  });
  try {
    variants = (await api("GET", "/api/variants")).variants;
    fillVariants();
  } catch (e) { showError(e.message); return; }
  const id = new URLSearchParams(location.hash.slice(1)).get("game");
  if (id) {  // a reload, or this game's address opened in another tab
    try {
      const view = await api("GET", `/api/games/${id}`);
      switchTab(view.mode);
      fillViewer(view.players);
      show(view);
      if (view.mode === "watch") { paused = true; $("pause").textContent = "Resume"; }
    } catch (e) { showError(e.message); history.replaceState(null, "", location.pathname); }
  }
}

init();
