// c8env page: the server keeps the game and decides every rule; this script only shows the
// view it gets (one seat's) and sends the chosen legal action ids. No build step, no framework.
"use strict";

const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else if (k === "text") node.textContent = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
};

let options = null;   // /api/options
let game = null;      // the latest view of the live game
let timer = null;     // the pending agent move
let busy = false;     // a request of ours is in flight
let uploads = [];     // [{spec, name}]
let replay = null;    // {data, frames}
let lastReplay = null;

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.hidden = !message;
}

function show(section) {
  for (const id of ["setup", "table", "replay"]) $(id).hidden = id !== section;
}

// ----- cards ---------------------------------------------------------------------------------------
function cardFace(card, tag = "div", small = false) {
  const node = el(tag, { class: `card ${card.red ? "red" : "black"}${small ? " small" : ""}`, "data-card": card.text,
                         title: card.text });
  node.append(el("span", { class: "corner", text: `${card.rank}\n${card.symbol}` }), el("span", { class: "pip", text: card.symbol }));
  return node;
}

// ----- set-up ----------------------------------------------------------------------------------------
// The catalog's agents (c8env agents): the one recommended for the chosen players and rules is marked, and each
// says in its tooltip what it is and what it was made for.
function agentChoices() {
  const n = +$("players").value;
  const rules = $("rules").value;
  const best = (options.recommended || []).find((r) => r.players === n && r.rules === rules);
  const shipped = (options.catalog || []).map((a) => {
    const madeFor = a.players === null ? "every setting" : `${a.rules}, ${a.players.join(" or ")} players`;
    const mark = best && best.agent === a.name ? " (recommended)" : "";
    return { spec: a.name, name: a.name + mark, title: `${a.summary} (${a.role}; made for ${madeFor})` };
  });
  return [...shipped, ...uploads.map((u) => ({ spec: u.spec, name: `uploaded: ${u.name}`, title: "" }))];
}

function buildOpponents() {
  const n = +$("players").value;
  const seat = +$("seat").value;
  const box = $("opponents");
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
  box.querySelectorAll(".opp").forEach((x) => x.remove());
  for (let k = 1; k < n; k++) {
    const s = (seat + k) % n;
    const select = el("select", { id: `agent-${k}`, "data-seat": String(s) });
    for (const choice of agentChoices()) select.append(el("option", { value: choice.spec, text: choice.name, title: choice.title }));
    select.value = previous[k - 1] && agentChoices().some((c) => c.spec === previous[k - 1]) ? previous[k - 1] : "greedy";
    const budget = el("input", { id: `budget-${k}`, type: "number", min: "1", max: String(options.max_expert_simulations),
                                 value: "100", title: "expert: simulations per move" });
    const budgetLabel = el("span", { class: "muted", text: "simulations" });
    const sync = () => { budget.hidden = budgetLabel.hidden = select.value !== "expert"; };
    select.addEventListener("change", sync);
    sync();
    box.append(el("div", { class: "opp" }, el("span", { text: `player_${s}` }), select, budget, budgetLabel));
  }
}

function buildSeats() {
  const n = +$("players").value;
  const old = +$("seat").value || 0;
  $("seat").replaceChildren(...Array.from({ length: n }, (_, i) => el("option", { value: String(i), text: `player_${i}` })));
  $("seat").value = String(Math.min(old, n - 1));
  buildOpponents();
}

async function setup() {
  options = await api("GET", "/api/options");
  $("rules").replaceChildren(...options.presets.map((p) => el("option", { value: p, text: p })));
  $("rules").value = "standard";
  const [lo, hi] = options.players;
  $("players").replaceChildren(...Array.from({ length: hi - lo + 1 }, (_, i) => el("option", { value: String(lo + i), text: String(lo + i) })));
  $("players").value = "2";
  buildSeats();
  $("players").addEventListener("change", buildSeats);
  $("seat").addEventListener("change", buildOpponents);
  $("rules").addEventListener("change", buildOpponents);
  for (const id of ["delay", "delay2"]) {
    $(id).addEventListener("input", (e) => setDelay(+e.target.value));
  }
  $("policy-file").addEventListener("change", uploadPolicy);
  $("start").addEventListener("click", startGame);
  $("nav-new").addEventListener("click", () => { stopTimer(); show("setup"); });
  $("nav-replay").addEventListener("click", () => { stopTimer(); show("replay"); });
  $("btn-again").addEventListener("click", () => { stopTimer(); show("setup"); });
  $("btn-next-hand").addEventListener("click", () => request("POST", "next_hand"));
  $("btn-download").addEventListener("click", downloadReplay);
  $("btn-watch").addEventListener("click", watchReplay);
  $("replay-file").addEventListener("change", loadReplayFile);
  $("replay-seat").addEventListener("change", () => renderFrame(+$("rp-slider").value));
  $("rp-slider").addEventListener("input", (e) => renderFrame(+e.target.value));
  $("rp-first").addEventListener("click", () => renderFrame(0));
  $("rp-prev").addEventListener("click", () => renderFrame(+$("rp-slider").value - 1));
  $("rp-next").addEventListener("click", () => renderFrame(+$("rp-slider").value + 1));
  $("rp-last").addEventListener("click", () => renderFrame(replay.frames.length - 1));
  for (const [id, kind] of [["btn-draw", "draw"], ["btn-pass", "pass"], ["btn-announce", "announce"], ["btn-stop", "stop"]]) {
    $(id).addEventListener("click", () => playKind(kind));
  }
}

function delay() { return +$("delay").value; }
function setDelay(ms) {
  $("delay").value = $("delay2").value = String(ms);
  $("delay-text").textContent = `${ms} ms`;
}

async function uploadPolicy() {
  const file = $("policy-file").files[0];
  if (!file) return;
  $("upload-status").textContent = "uploading…";
  try {
    const response = await fetch(`/api/policies?name=${encodeURIComponent(file.name)}`, { method: "POST", body: file });
    const data = await response.json();
    if (!response.ok) throw new Error(data.error);
    uploads.push(data);
    $("upload-status").textContent = `uploaded ${data.name}: choose "uploaded: ${data.name}" for a seat`;
    buildOpponents();
    showError("");
  } catch (err) {
    $("upload-status").textContent = "";
    showError(`upload failed: ${err.message}`);
  }
}

async function startGame() {
  const n = +$("players").value;
  const agents = [];
  for (let k = 1; k < n; k++) {
    const spec = $(`agent-${k}`).value;
    agents.push(spec === "expert" ? `expert:simulations=${+$(`budget-${k}`).value || 100}` : spec);
  }
  const body = { rules: $("rules").value, players: n, seat: +$("seat").value, episode: $("episode").value, agents };
  if ($("seed").value !== "") body.seed = +$("seed").value;
  try {
    game = await api("POST", "/api/games", body);
    showError("");
    show("table");
    render();
    schedule();
  } catch (err) {
    showError(err.message);
  }
}

// ----- playing ------------------------------------------------------------------------------------------
function stopTimer() { if (timer) clearTimeout(timer); timer = null; }

function schedule() {
  stopTimer();
  if (game && game.status === "agent_turn") timer = setTimeout(() => request("POST", "advance"), delay());
}

async function request(method, what, body) {
  if (!game || busy) return;
  busy = true;
  stopTimer();
  try {
    game = await api(method, `/api/games/${game.game_id}/${what}`, body);
    showError("");
  } catch (err) {
    showError(err.message);
  } finally {
    busy = false;
  }
  render();
  schedule();
}

function play(actionId) { return request("POST", "actions", { action: actionId, seat: game.seat }); }
function playKind(kind) {
  const action = game.legal.find((a) => a.kind === kind);
  if (action) play(action.id);
}

function seatName(view, seat) { return seat === view.seat ? "you" : `player_${seat}`; }

function renderTable(view, viewer, names, containers) {
  // The table of a view: `viewer` is the seat whose hand is shown (null: every hand open).
  const { others, top, facts } = containers;
  others.replaceChildren();
  for (const s of view.seats) {
    if (s.seat === viewer) continue;
    const box = el("div", { class: `seat${view.current_player === s.seat ? " to-act" : ""}`, "data-seat": String(s.seat) });
    box.append(el("div", { class: "name", text: names(s.seat) }));
    if (s.agent !== undefined) box.append(el("div", { class: "agent", text: s.agent || "" }));
    box.append(el("div", { class: "count", text: `${s.cards} card${s.cards === 1 ? "" : "s"} · score ${s.score}`
                                                   + (s.countdown !== undefined ? ` · countdown ${s.countdown}` : "") }));
    if (s.hand && (viewer === null || view.hand_over)) {
      const open = el("div", { class: "open" });
      for (const c of s.hand) open.append(cardFace(c, "div", true));
      box.append(open);
    } else {
      const backs = el("div", { class: "backs" });
      for (let i = 0; i < Math.min(s.cards, 20); i++) backs.append(el("div", { class: "mini" }));
      box.append(backs);
    }
    others.append(box);
  }
  top.replaceChildren(cardFace(view.top_card));
  facts.stock.textContent = String(view.stock);
  const symbols = { C: "♣", D: "♦", H: "♥", S: "♠" };
  facts.follow.textContent = view.suit_to_follow === null ? "any card"
    : symbols[view.suit_to_follow] + (view.rank_to_follow === null ? "" : ` or rank ${view.rank_to_follow}`);
  facts.follow.className = view.suit_to_follow === "D" || view.suit_to_follow === "H" ? "red-text" : "";
  facts.direction.textContent = view.direction === 1 ? "clockwise ↻" : "counter-clockwise ↺";
  facts.pending.textContent = String(view.pending);
  facts.pendingBox.hidden = !view.pending;
}

function logItems(events, viewer, names) {
  return events.map((e) => {
    if (e.seat === null || e.seat === undefined) return el("li", { text: e.text });
    const drawn = e.drawn && e.drawn.length && (viewer === null || e.seat === viewer) ? ` → ${e.drawn.join(" ")}` : "";
    return el("li", { text: `${names(e.seat)}: ${e.text}${drawn}` });
  });
}

function render() {
  if (!game) return;
  const v = game;
  document.body.dataset.status = busy ? "busy" : v.status;   // for tests and styling: the page's state
  document.body.dataset.renders = String((+document.body.dataset.renders || 0) + 1);
  const names = (s) => seatName(v, s);
  renderTable(v, v.seat, names, {
    others: $("others"), top: $("top-card"),
    facts: { stock: $("stock-count"), follow: $("follow"), direction: $("direction"), pending: $("pending"), pendingBox: $("pending-box") },
  });
  $("hand-number").textContent = String(v.hands_played + (v.hand_over ? 0 : 1));
  $("rules-name").textContent = `${v.rules}, ${v.episode}`;
  const me = v.seats[v.seat];
  $("me").textContent = `you (player_${v.seat}): ${me.cards} card${me.cards === 1 ? "" : "s"} · score ${me.score}`
                        + (me.countdown !== undefined ? ` · countdown ${me.countdown}` : "");
  const legal = new Set(v.legal.filter((a) => a.kind === "card").map((a) => a.id));
  const yourTurn = v.status === "your_turn" && !busy;
  $("hand").replaceChildren(...v.hand.map((c) => {
    const b = cardFace(c, "button");
    b.type = "button";
    b.disabled = !yourTurn || !legal.has(c.id);
    b.addEventListener("click", () => play(c.id));
    return b;
  }));
  for (const kind of ["draw", "pass", "announce", "stop"]) {
    const action = v.legal.find((a) => a.kind === kind);
    const button = $(`btn-${kind}`);
    button.hidden = !action;
    button.disabled = !yourTurn;
    if (action) button.title = action.text;
  }
  const declares = v.legal.filter((a) => a.kind === "declare");
  $("suit-picker").hidden = !declares.length;
  $("suit-picker").replaceChildren(...declares.map((a) => {
    const b = el("button", { type: "button", class: a.suit === "D" || a.suit === "H" ? "red" : "", "data-suit": a.suit,
                             title: a.text, text: a.symbol });
    b.addEventListener("click", () => play(a.id));
    return b;
  }));
  const status = $("status");
  status.className = "status";
  if (v.status === "your_turn") {
    status.className = "status turn";
    status.textContent = declares.length ? "Your turn: declare a suit" : v.phase === "announce" ? "Your turn: announce your last card?" : "Your turn";
  } else if (v.status === "agent_turn") {
    status.textContent = `player_${v.current_player} (${v.seats[v.current_player].agent}) is thinking…`;
  } else if (v.status === "error") {
    status.textContent = `Game ended: ${v.message}`;
  } else {
    status.textContent = "Hand over";
  }
  const log = $("log");
  log.start = (v.log_start || 0) + 1;
  log.replaceChildren(...logItems(v.log, v.seat, names));
  log.scrollTop = log.scrollHeight;
  renderEnd(v);
}

function renderEnd(v) {
  const over = v.status === "hand_over" || v.status === "finished" || v.status === "error";
  $("end").hidden = !over;
  if (!over) return;
  const r = v.result;
  let title;
  if (v.status === "error") title = "Game ended";
  else if (r.match_over) title = r.match_winner === v.seat ? "You win the match!" : `player_${r.match_winner} wins the match`;
  else if (r.winner === null) title = "Nobody wins the hand (tie)";
  else title = r.winner === v.seat ? "You win the hand!" : `player_${r.winner} wins the hand`;
  $("end-winner").textContent = title;
  $("end-reason").textContent = v.status === "error" ? v.message : `hand ended: ${r.reason}`;
  const rows = [el("tr", {}, el("th", { text: "seat" }), el("th", { text: "hand points" }), el("th", { text: "score" }))];
  if (r) {
    for (const s of v.seats) {
      rows.push(el("tr", { "data-seat": String(s.seat) }, el("td", { text: seatName(v, s.seat) }),
                   el("td", { text: String(r.hand_points[s.seat]) }), el("td", { class: "score", text: String(r.scores[s.seat]) })));
    }
  }
  $("end-scores").replaceChildren(...rows);
  $("btn-next-hand").hidden = v.status !== "hand_over";
  $("btn-download").hidden = $("btn-watch").hidden = !v.replay_ready;
}

async function downloadReplay() {
  try {
    const data = await api("GET", `/api/games/${game.game_id}/replay`);
    const blob = new Blob([JSON.stringify(data, null, 1)], { type: "application/json" });
    const link = el("a", { href: URL.createObjectURL(blob), download: `c8env-replay-${game.game_id.slice(0, 8)}.json` });
    document.body.append(link);
    link.click();
    link.remove();
  } catch (err) {
    showError(err.message);
  }
}

// ----- replays ------------------------------------------------------------------------------------------
async function openReplay(text) {
  try {
    const result = await api("POST", "/api/replays", text);
    replay = result;
    const seatSelect = $("replay-seat");
    seatSelect.replaceChildren(el("option", { value: "open", text: "all hands open" }),
      ...Array.from({ length: result.num_players }, (_, i) => el("option", { value: String(i), text: `as player_${i} (${result.agents[i] || "person"})` })));
    $("replay-info").textContent = `${result.num_players} players · rules ${typeof result.rules === "string" ? result.rules : "custom"} · `
      + `${result.episode} · seed ${result.seed} · ${result.frames.length - 1} moves`;
    $("rp-slider").max = String(result.frames.length - 1);
    $("replay-body").hidden = false;
    show("replay");
    showError("");
    renderFrame(0);
  } catch (err) {
    showError(`replay: ${err.message}`);
  }
}

async function loadReplayFile() {
  const file = $("replay-file").files[0];
  if (file) openReplay(await file.text());
}

async function watchReplay() {
  try {
    lastReplay = await api("GET", `/api/games/${game.game_id}/replay`);
    stopTimer();
    await openReplay(JSON.stringify(lastReplay));
  } catch (err) {
    showError(err.message);
  }
}

function renderFrame(i) {
  if (!replay) return;
  i = Math.max(0, Math.min(i, replay.frames.length - 1));
  const frame = replay.frames[i];
  const choice = $("replay-seat").value;
  const viewer = choice === "open" ? null : +choice;
  const names = (s) => `player_${s}`;
  const box = $("rp-table");
  const others = el("div", { class: "others" });
  const top = el("div");
  const facts = { stock: el("span"), follow: el("b"), direction: el("b"), pending: el("b"), pendingBox: el("div", { text: "pending draw: " }) };
  facts.pendingBox.append(facts.pending);
  const view = { ...frame, seats: frame.seats.map((s) => ({ ...s, agent: replay.agents[s.seat] || "person" })) };
  renderTable(view, viewer, names, { others, top, facts });
  const stock = el("div", { class: "pile" }, el("div", { class: "label", text: "stock" }), el("div", { class: "card back" }, facts.stock));
  const discard = el("div", { class: "pile" }, el("div", { class: "label", text: "discard" }), top);
  const factBox = el("div", { class: "facts" }, el("div", { text: "follow: " }, facts.follow), el("div", { text: "direction: " }, facts.direction), facts.pendingBox);
  const parts = [others, el("div", { class: "middle" }, stock, discard, factBox)];
  if (viewer !== null) {
    const mine = frame.seats[viewer];
    const hand = el("div", { class: "hand" }, ...mine.hand.map((c) => cardFace(c)));
    parts.push(el("div", { class: "me", text: `player_${viewer}: ${mine.cards} cards · score ${mine.score}` }), hand);
  }
  box.replaceChildren(...parts);
  $("rp-slider").value = String(i);
  $("rp-step").textContent = `step ${i} / ${replay.frames.length - 1} · hand ${frame.hand_index + 1}`;
  const events = [];
  for (let k = 1; k <= i; k++) {
    if (replay.frames[k].hand_index !== replay.frames[k - 1].hand_index) events.push({ seat: null, text: `— hand ${replay.frames[k].hand_index + 1} dealt —` });
    if (replay.frames[k].event) events.push(replay.frames[k].event);
  }
  const shown = logItems(events, viewer, names);
  $("rp-event").textContent = shown.length ? shown[shown.length - 1].textContent : `hand ${frame.hand_index + 1} dealt`;
  $("rp-log").replaceChildren(...shown);
  $("rp-log").scrollTop = $("rp-log").scrollHeight;
}

setup().catch((err) => showError(`cannot reach the server: ${err.message}`));
