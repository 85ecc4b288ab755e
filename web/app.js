// FoodMoment in the browser: plain ES modules, no build step. Every value from the server or the user reaches the
// page through textContent or an attribute set by the DOM API (`el`), never as HTML, so a food named
// "<img onerror=…>" is shown as text; the server's Content-Security-Policy refuses inline script besides.
import { api, APIError, download, idempotencyKey, imageURL, setToken, sha256Hex, token } from './api.js';
import { language, languages, setLanguage, t } from './i18n.js';
import { enqueue, flush, pending } from './queue.js';

const maxPhotoMB = 20;
const photoTypes = ['image/jpeg', 'image/png', 'image/heic', 'image/heif', 'image/webp'];
const main = document.getElementById('main');
const notice = document.getElementById('notice');
const svgNS = 'http://www.w3.org/2000/svg';

/// The current analysis being edited (Result screen): the server's answer, the photo's object URL and the user's grams.
let draft = null;

// MARK: - Small DOM helpers

/// An element with attributes (`on…` keys become listeners) and children (strings become text nodes).
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(svgNS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

function show(...nodes) {
  main.replaceChildren(...nodes);
  main.focus({ preventScroll: true });
}

/// `show` for a screen drawn after waiting on the server: when the answer comes after the person moved to another
/// tab, it is dropped instead of covering the screen they are on.
function showFor(screen, ...nodes) {
  if (location.hash === screen) show(...nodes);
}

/// A message a person understands, in the status line (errors stay until the next action).
function say(text, kind = 'info') {
  notice.textContent = text;
  notice.className = `notice ${kind}`;
  notice.hidden = !text;
}

/// What went wrong, in words: the server's own message for a 4xx, our words for the rest.
function explain(error) {
  if (!(error instanceof APIError)) return t('error.server');
  if (error.status === 0) return t('error.network');
  if (error.status === 401) return t('error.unauthorized');
  if (error.status === 429) return t('error.ratelimited', { seconds: error.retryAfter ?? 60 });
  if (error.status === 422 && error.code === 'unreadable_image') return t('error.unreadable');
  if (error.status >= 400 && error.status < 500 && error.message) return error.message;
  return t('error.server');
}

/// A failed request: a 401 goes back to sign-in; anything else is said on the page.
function fail(error) {
  if (error instanceof APIError && error.status === 401) {
    setToken(null);
    if (location.hash === '#/signin') route(); else location.hash = '#/signin';
  }
  say(explain(error), 'error');
}

/// Runs an action; its failure goes to `fail` and gives undefined.
async function guarded(action) {
  try {
    return await action();
  } catch (error) {
    fail(error);
    return undefined;
  }
}

/// A food's name in the page's language, with its emoji.
function foodName(f) { return language() === 'zh' && f.name_zh ? f.name_zh : f.name; }
function foodLabel(f) { return `${f.emoji} ${foodName(f)}`; }

/// The time zone days are counted in: the one saved in Settings (also the server profile's), else the device's.
function zone() { return localStorage.getItem('foodmoment.tz') || Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'; }

/// "08:05" / "08:05 AM" in the page's language and the chosen time zone.
function clock(date) {
  return new Date(date).toLocaleTimeString(language() === 'zh' ? 'zh-CN' : 'en', { hour: '2-digit', minute: '2-digit', timeZone: zone() });
}

const round = (v) => Math.round(v);
const one = (v) => Math.round(v * 10) / 10;

/// YYYY-MM-DD of `date` in the chosen time zone.
function localDay(date = new Date()) {
  return new Intl.DateTimeFormat('en-CA', { timeZone: zone(), year: 'numeric', month: '2-digit', day: '2-digit' }).format(date);
}

/// A calendar day's date (noon UTC, so it names the same day in any zone) and day arithmetic on YYYY-MM-DD.
function dayDate(day) { return new Date(`${day}T12:00:00Z`); }
function addDays(day, n) { const d = dayDate(day); d.setUTCDate(d.getUTCDate() + n); return d.toISOString().slice(0, 10); }
function dayText(day, options) { return dayDate(day).toLocaleDateString(language() === 'zh' ? 'zh-CN' : 'en', { ...options, timeZone: 'UTC' }); }
/// "Dec 6" / "12月6日": the local day of a time, short.
function shortDay(time) { return dayText(localDay(new Date(time)), { month: 'short', day: 'numeric' }); }

/// Units the person chose (Settings): energy in kcal or kJ, body weight in kg or lb. The server keeps kcal and kg.
const kJPerKcal = 4.184, lbPerKg = 2.20462;
function energyUnit() { return localStorage.getItem('foodmoment.energy') === 'kJ' ? 'kJ' : 'kcal'; }
function weightUnit() { return localStorage.getItem('foodmoment.weight') === 'lb' ? 'lb' : 'kg'; }
function energyValue(kcal) { return energyUnit() === 'kJ' ? kcal * kJPerKcal : kcal; }
/// "512 kcal" / "2142 kJ" / "512 千卡".
function energy(kcal) { return `${round(energyValue(kcal))} ${t(`unit.${energyUnit()}`)}`; }
function weight(kg) { return `${one(weightUnit() === 'lb' ? kg * lbPerKg : kg)} ${t(`unit.${weightUnit()}`)}`; }

/// What this server offers (`GET /auth/methods`): Sign in with Apple, LLM refinement. Asked once per page.
let methods = null;
async function serverMethods() {
  if (!methods) methods = await api('/auth/methods').catch(() => ({ token: true, refine: false }));
  return methods;
}

// MARK: - Screens

function signIn() {
  const input = el('input', { id: 'token', type: 'password', autocomplete: 'current-password', spellcheck: 'false', required: true });
  const form = el('form', {
    class: 'card', onsubmit: async (event) => {
      event.preventDefault();
      const value = input.value.trim();
      if (!value) { say(t('signin.empty'), 'error'); return; }
      setToken(value);
      try {
        await rememberProfile();
        say('');
        location.hash = '#/today';
      } catch (error) {
        setToken(null);
        say(error instanceof APIError && error.status === 401 ? t('signin.bad') : explain(error), 'error');
      }
    },
  },
  el('h2', { text: t('signin.title') }),
  el('div', { id: 'apple-slot' }),
  el('p', { class: 'help', text: t('signin.help') }),
  el('label', { for: 'token', text: t('signin.token') }), input,
  el('button', { type: 'submit', class: 'primary', text: t('signin.submit') }));
  show(form);
  input.focus();
  serverMethods().then((m) => {
    const slot = document.getElementById('apple-slot');
    if (!m.apple || !slot) return;
    slot.replaceChildren(el('button', { type: 'button', id: 'apple', class: 'apple', text: t('signin.apple'), onclick: () => startApple(m.apple) }),
      el('p', { class: 'or', text: t('signin.or') }));
  });
}

/// The profile's time zone becomes the page's (days, clocks) unless the person chose one here; also proves the token.
async function rememberProfile() {
  const profile = await api('/user/profile');
  if (profile?.time_zone && !localStorage.getItem('foodmoment.tz')) localStorage.setItem('foodmoment.tz', profile.time_zone);
  return profile;
}

/// Sign in with Apple, the web way: Apple's page, then back here with an identity token in the URL's fragment (never
/// sent to any server by the browser). `state` ties the answer to this tab; Apple gets SHA-256 of the nonce, our
/// server the nonce, so a token taken from elsewhere cannot be replayed here.
async function startApple(apple) {
  const state = crypto.randomUUID(), nonce = crypto.randomUUID();
  sessionStorage.setItem('foodmoment.apple', JSON.stringify({ state, nonce }));
  const url = new URL(apple.authorize_url);
  url.search = new URLSearchParams({ client_id: apple.client_id, redirect_uri: `${location.origin}/`, response_type: 'code id_token',
    response_mode: 'fragment', state, nonce: await sha256Hex(nonce) }).toString();
  location.assign(url.toString());
}

/// Back from Apple: the fragment holds `id_token` and `state` (or `error`). Removed from the address bar at once.
async function finishApple() {
  const answer = new URLSearchParams(location.hash.slice(1));
  history.replaceState(null, '', '#/signin');
  const started = JSON.parse(sessionStorage.getItem('foodmoment.apple') ?? 'null');
  sessionStorage.removeItem('foodmoment.apple');
  if (answer.get('error')) { say(t('signin.applecancelled'), 'error'); return; }
  if (!started || answer.get('state') !== started.state) { say(t('signin.applestate'), 'error'); return; }
  say(t('signin.appleworking'));
  try {
    const tokens = await api('/auth/apple', { method: 'POST', body: { identity_token: answer.get('id_token'), nonce: started.nonce } });
    setToken(tokens.access_token, tokens.refresh_token);
    await rememberProfile();
    say('');
    history.replaceState(null, '', '#/today');
  } catch (error) {
    setToken(null);
    say(explain(error), 'error');
  }
}

function capture() {
  const input = el('input', { id: 'photo', type: 'file', accept: 'image/*', capture: 'environment', multiple: true, class: 'visually-hidden' });
  input.addEventListener('change', () => { if (input.files.length) analyzeAll([...input.files]); });
  const zone = el('div', { class: 'drop', id: 'drop' },
    el('p', { class: 'help', text: t('capture.help') }),
    el('label', { for: 'photo', class: 'button primary', tabindex: '0', role: 'button', id: 'pick', text: t('capture.pick'),
      onkeydown: (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); input.click(); } } }),
    input,
    el('p', { class: 'hint', text: t('capture.drop') }));
  zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    if (e.dataTransfer.files.length) analyzeAll([...e.dataTransfer.files]);
  });
  show(el('section', { class: 'card' }, el('h2', { text: t('capture.title') }), zone));
}

/// Several photos are analysed one after the other: each gets its own result screen, logged or skipped in turn.
let photoQueue = [];
function analyzeAll(files) {
  photoQueue = files.slice(1).map((file, i) => ({ file, number: i + 2, of: files.length }));
  analyze(files[0], files.length > 1 ? { number: 1, of: files.length } : null);
}

/// The next photo of a batch, if any; else `then`.
function nextPhoto(then) {
  const next = photoQueue.shift();
  if (next) analyze(next.file, { number: next.number, of: next.of }); else then();
}

/// Checks the file here (type and size), sends it, and shows the result; then, when this server has an LLM, asks
/// it to check the foods and shows its answer when it arrives.
async function analyze(file, position = null) {
  if (!photoTypes.includes(file.type) && !/\.(jpe?g|png|heic|heif|webp)$/i.test(file.name)) {
    say(t('error.notimage', { name: file.name }), 'error');
    nextPhoto(() => {});
    return;
  }
  if (file.size > maxPhotoMB * 1024 * 1024) {
    say(t('error.toolarge', { name: file.name, mb: maxPhotoMB }), 'error');
    nextPhoto(() => {});
    return;
  }
  say('');
  const progress = el('div', { class: 'card busy', role: 'progressbar', 'aria-busy': 'true', 'aria-label': t('capture.busy') },
    el('div', { class: 'spinner', 'aria-hidden': 'true' }), el('p', { id: 'progress-text', text: t('capture.uploading') }));
  show(progress);
  const sent = setTimeout(() => { const p = document.getElementById('progress-text'); if (p) p.textContent = t('capture.busy'); }, 300);
  const type = photoTypes.includes(file.type) ? file.type : 'image/jpeg';
  const blob = new Blob([file], { type });
  const answer = await guarded(() => api('/food/analyze?store_photo=true', { method: 'POST', body: blob }));
  clearTimeout(sent);
  if (!answer) { photoQueue = []; capture(); return; }
  draft = {
    answer, position, edited: false,
    photo: URL.createObjectURL(file),
    foods: editable(answer),
  };
  if (location.hash === '#/result') result(); else location.hash = '#/result';
  const mine = draft;
  if ((await serverMethods()).refine) refine(mine, blob);
}

/// Stage 2 in the background: the server's LLM corrects identity and grams (never nutrition). Applied at once when the
/// person has not touched the result yet; otherwise offered.
async function refine(mine, blob) {
  mine.refining = true;
  setRefineNote(mine, t('result.refining'));
  let answer;
  try {
    answer = await api('/food/analyze?store_photo=true&refine=true', { method: 'POST', body: blob });
  } catch (error) {
    mine.refining = false;
    setRefineNote(mine, error instanceof APIError ? explain(error) : '');
    return;
  }
  mine.refining = false;
  const info = answer.refinement ?? {};
  if (info.status !== 'refined') { setRefineNote(mine, t('result.unrefined', { reason: info.reason ?? '—' })); return; }
  const foods = editable(answer);
  const model = info.model ?? info.provider ?? 'LLM';
  const use = () => {
    mine.answer = answer;
    mine.foods.splice(0, mine.foods.length, ...foods);
    mine.refineNote = t('result.refined', { model });
    mine.offer = null;
    if (draft === mine && location.hash === '#/result') result();
  };
  if (!mine.edited) { use(); return; }
  mine.offer = { text: t('result.refinedoffer', { model, foods: foods.map((f) => `${foodLabel(f)} ${round(f.grams)} g`).join(', ') }), use };
  if (draft === mine && location.hash === '#/result') result();
}

function setRefineNote(mine, text) {
  mine.refineNote = text;
  const note = document.getElementById('refine-note');
  if (draft === mine && note) { note.textContent = text; note.hidden = !text; }
}

/// An analysis's foods as the result screen edits them: each remembers the grams its numbers are for.
function editable(answer) { return answer.detected_foods.map((f) => ({ ...f, startGrams: f.grams })); }

/// A food's numbers for `grams`: the analysis's values scaled (they are per its own grams, from the tables).
function scaled(food, grams) {
  const k = food.startGrams > 0 ? grams / food.startGrams : 0;
  const v = (x) => (typeof x === 'number' ? x * k : null);
  return { kcal: v(food.calories), protein: v(food.protein_g), carbs: v(food.carbs_g), fat: v(food.fat_g),
    sugars: v(food.sugars_g), sodium: v(food.sodium_mg) };
}

/// Search-as-you-type over the nutrition tables (`GET /food/search?prefix=true`): a combobox whose list updates 200 ms
/// after the last key; ↓ enters the list, Enter or a click picks, Escape closes. `onPick(hit)` gets the chosen result.
function foodSearch(id, label, onPick) {
  const input = el('input', { id, type: 'search', role: 'combobox', 'aria-autocomplete': 'list',
    'aria-expanded': 'false', 'aria-controls': `${id}-list`, 'aria-label': label, placeholder: label });
  const list = el('ul', { id: `${id}-list`, role: 'listbox', class: 'hits', 'aria-label': label, hidden: true });
  let timer, asked = 0;
  const close = () => { list.hidden = true; input.setAttribute('aria-expanded', 'false'); };
  const pick = (hit) => { close(); input.value = ''; onPick(hit); };
  input.addEventListener('input', () => {
    clearTimeout(timer);
    const q = input.value.trim();
    if (!q) { close(); return; }
    timer = setTimeout(async () => {
      const mine = ++asked;
      const found = await guarded(() => api(`/food/search?q=${encodeURIComponent(q)}&limit=6&prefix=true`));
      if (mine !== asked || !found) return;   // a later keystroke's answer wins
      list.replaceChildren(...found.results.map((hit, i) => el('li', {
        role: 'option', id: `${id}-hit-${i}`, tabindex: '-1', class: 'hit', 'aria-selected': 'false',
        onclick: () => pick(hit), onkeydown: (e) => { if (e.key === 'Enter') { e.preventDefault(); pick(hit); } },
      }, el('span', { text: hit.brand ? `${hit.name} (${hit.brand})` : hit.name }),
      el('span', { class: 'help', text: typeof hit.kcal_per_100g === 'number' ? `${energy(hit.kcal_per_100g)} / 100 g` : '' }))));
      list.hidden = found.results.length === 0;
      input.setAttribute('aria-expanded', String(!list.hidden));
    }, 200);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' && !list.hidden) { e.preventDefault(); list.querySelector('li')?.focus(); }
    if (e.key === 'Escape') close();
  });
  list.addEventListener('keydown', (e) => {
    const items = [...list.querySelectorAll('li')], i = items.indexOf(document.activeElement);
    if (e.key === 'ArrowDown' && i < items.length - 1) { e.preventDefault(); items[i + 1].focus(); }
    if (e.key === 'ArrowUp') { e.preventDefault(); (i > 0 ? items[i - 1] : input).focus(); }
    if (e.key === 'Escape') { close(); input.focus(); }
  });
  return el('div', { class: 'search' }, input, list);
}

/// A search hit as a food of the result: its table id as the label (the server resolves it exactly), its values
/// per 100 g as the numbers for 100 g. `index` keeps the place of the logged food it replaces (editing).
function fromHit(hit, grams, box, index) {
  return { label: hit.food_id, name: hit.name, name_zh: '', emoji: '🍽️', color: '#888888', confidence: 1, bounding_box: box,
    grams, startGrams: 100, calories: hit.kcal_per_100g ?? null, protein_g: hit.protein_g_per_100g ?? null,
    carbs_g: hit.carbs_g_per_100g ?? null, fat_g: hit.fat_g_per_100g ?? null, source: 'user', index, replaced: index !== undefined };
}

/// The result of a photo, or a logged meal being edited (`draft.meal`): photo with boxes, foods with grams, totals.
function result() {
  if (!draft) { location.hash = '#/capture'; return; }
  const { answer, foods } = draft;
  const editing = Boolean(draft.meal);
  const figure = el('figure', { class: 'photo' });
  const overlay = svg('svg', { class: 'boxes', viewBox: '0 0 100 100', preserveAspectRatio: 'none', 'aria-hidden': 'true' });
  if (draft.photo) figure.append(el('img', { src: draft.photo, alt: answer.ai_analysis ?? '', id: 'meal-photo' }), overlay);
  const list = el('ul', { class: 'foods', id: 'foods' });
  const total = el('p', { class: 'total', id: 'total', 'aria-live': 'polite' });
  const touched = () => { draft.edited = true; };

  function redraw() {
    overlay.replaceChildren();
    for (const f of foods.filter((x) => x.bounding_box)) {
      const b = f.bounding_box;
      // A dark outline under the food's colour, so a pale colour (rice's cream) still shows on a pale photo.
      const rect = { x: b.x * 100, y: b.y * 100, width: b.w * 100, height: b.h * 100, 'vector-effect': 'non-scaling-stroke' };
      overlay.append(svg('rect', { ...rect, class: 'box-shade' }), svg('rect', { ...rect, class: 'box', stroke: f.color }));
    }
    figure.querySelectorAll('.tag').forEach((n) => n.remove());
    if (draft.photo) {
      for (const f of foods.filter((x) => x.bounding_box)) {
        const b = f.bounding_box;
        // Above the box, or inside it when the box starts at the photo's top edge (above would cover the title).
        const tag = el('span', { class: b.y < 0.08 ? 'tag inside' : 'tag', text: foodLabel(f) });
        tag.style.left = `${b.x * 100}%`;
        tag.style.top = `${b.y * 100}%`;
        tag.style.borderColor = f.color;
        figure.append(tag);
      }
    }
    let kcal = 0, protein = 0, carbs = 0, fat = 0;
    for (const f of foods) {
      const n = scaled(f, f.grams);
      kcal += n.kcal ?? 0; protein += n.protein ?? 0; carbs += n.carbs ?? 0; fat += n.fat ?? 0;
    }
    total.textContent = `${t('result.total')}: ${energy(kcal)} · ${t('macro.protein')} ${one(protein)} g · `
      + `${t('macro.carbs')} ${one(carbs)} g · ${t('macro.fat')} ${one(fat)} g`;
    logButton.disabled = foods.length === 0;
  }

  function row(f) {
    const name = foodName(f);
    const id = `grams-${foods.indexOf(f)}`;
    const number = el('input', { type: 'number', id, min: 0, max: 2000, step: 1, value: round(f.grams), inputmode: 'numeric',
      'aria-label': t('result.grams', { name }) });
    const slider = el('input', { type: 'range', min: 0, max: Math.max(500, round(f.startGrams * 3)), step: 1, value: round(f.grams),
      'aria-label': t('result.grams', { name }) });
    const kcal = el('span', { class: 'kcal' });
    const update = (value) => {
      const g = Math.max(0, Math.min(2000, Number(value) || 0));
      f.grams = g;
      number.value = String(round(g));
      slider.value = String(round(g));
      const n = scaled(f, g);
      kcal.textContent = n.kcal === null ? `— ${t(`unit.${energyUnit()}`)}` : energy(n.kcal);
      redraw();
    };
    number.addEventListener('input', () => { touched(); update(number.value); });
    slider.addEventListener('input', () => { touched(); update(slider.value); });
    const item = el('li', { class: 'food' },
      el('span', { class: 'swatch', 'aria-hidden': 'true' }),
      el('span', { class: 'name', text: `${f.emoji} ${name}` }),
      el('span', { class: 'confidence', text: `${round(f.confidence * 100)} %` }),
      el('span', { class: 'grams' }, number, ' g'), kcal, slider,
      el('button', { type: 'button', class: 'change', 'aria-label': t('result.change', { name }), 'aria-expanded': 'false', text: '✎',
        onclick: (e) => {
          const open = item.querySelector('.search');
          if (open) { open.remove(); e.target.setAttribute('aria-expanded', 'false'); return; }
          e.target.setAttribute('aria-expanded', 'true');
          const box = foodSearch(`replace-${foods.indexOf(f)}`, t('result.search'), (hit) => {
            touched();
            foods[foods.indexOf(f)] = fromHit(hit, f.grams, f.bounding_box, f.index);   // the new food where the old was seen
            result();
          });
          item.append(box);
          box.querySelector('input').focus();
        } }),
      el('button', { type: 'button', class: 'remove', 'aria-label': t('result.remove', { name }), text: '✕',
        onclick: () => { touched(); foods.splice(foods.indexOf(f), 1); item.remove(); redraw(); if (!foods.length) say(t('result.empty')); } }));
    item.querySelector('.swatch').style.background = f.color;
    update(f.grams);
    return item;
  }

  const logButton = el('button', { type: 'button', class: 'primary', id: 'log', text: t(editing ? 'edit.save' : 'result.log'),
    onclick: editing ? saveMeal : logMeal });
  for (const f of foods) list.append(row(f));
  const body = foods.length ? list : el('p', { class: 'help', text: t('result.none') });
  const add = el('div', { class: 'add' }, el('label', { for: 'add-food', text: t('result.add') }),
    foodSearch('add-food', t('result.search'), (hit) => { touched(); foods.push(fromHit(hit, 100, null)); result(); }));
  const note = el('p', { class: 'help refine', id: 'refine-note', role: 'status', text: draft.refineNote ?? '', hidden: !draft.refineNote });
  const offer = draft.offer ? el('div', { class: 'offer', id: 'refine-offer' }, el('p', { text: draft.offer.text }),
    el('button', { type: 'button', id: 'use-refined', text: t('result.userefined'), onclick: draft.offer.use })) : null;
  const title = editing ? t('edit.title') : draft.position ? `${t('result.title')} · ${t('capture.several', { i: draft.position.number, n: draft.position.of })}` : t('result.title');
  const secondary = editing
    ? el('button', { type: 'button', id: 'cancel-edit', text: t('edit.cancel'), onclick: () => { draft = null; history.back(); } })
    : photoQueue.length
      ? el('button', { type: 'button', id: 'skip', text: t('result.skip'), onclick: () => { draft = null; nextPhoto(() => { location.hash = '#/capture'; }); } })
      : el('button', { type: 'button', text: t('result.again'), onclick: () => { draft = null; location.hash = '#/capture'; } });
  show(el('section', { class: 'card' }, el('h2', { text: title }),
    el('div', { class: 'result-layout' }, draft.photo ? el('div', { class: 'photo-column' }, figure) : null,
      el('div', {}, note, offer, body, add, total,
        el('div', { class: 'actions' }, logButton, secondary)))));
  redraw();
}

async function logMeal() {
  const button = document.getElementById('log');
  button.disabled = true;
  button.textContent = t('result.logging');
  const body = {
    image_id: draft.answer.image_id,
    tz: zone(),
    analysis: draft.answer.ai_analysis || undefined,
    foods: draft.foods.map((f) => ({ food: f.label, grams: one(f.grams), box: f.bounding_box ?? undefined,
      confidence: typeof f.confidence === 'number' ? Math.round(f.confidence * 1000) / 1000 : undefined })),
  };
  const key = idempotencyKey();
  let meal;
  try {
    meal = await api('/meals', { method: 'POST', body, headers: { 'Idempotency-Key': key } });
  } catch (error) {
    if (error instanceof APIError && error.status === 0) {
      // No connection: kept here with its key and sent when the network is back (once: the server knows the key).
      const kcal = draft.foods.reduce((sum, f) => sum + (scaled(f, f.grams).kcal ?? 0), 0);
      const names = draft.foods.map(foodLabel).join(' · ');
      await enqueue(key, body, { kcal, names, time: new Date().toISOString() });
      draft = null;
      say(t('result.queued'));
      nextPhoto(() => { location.hash = '#/today'; });
      return;
    }
    fail(error);
    button.disabled = false;
    button.textContent = t('result.log');
    return;
  }
  draft = null;
  say(t('result.logged', { energy: energy(meal.totals.kcal) }));
  nextPhoto(() => { location.hash = '#/today'; });
}

/// Opens a logged meal in the result screen: its kept photo and boxes, its foods with their grams.
async function editMeal(meal) {
  const hash = meal.photos?.[0]?.hash;
  const photo = hash ? await imageURL(hash) : null;
  draft = {
    meal, answer: { ai_analysis: meal.title }, photo, edited: false,
    foods: meal.foods.map((f, index) => ({ ...f, index, calories: f.kcal, bounding_box: f.box ?? null, startGrams: f.grams })),
  };
  location.hash = '#/result';
}

/// `PUT /meals/{id}`: kept foods by index with their grams, a replaced one by index with its new food, added ones by name.
async function saveMeal() {
  const { meal, foods } = draft;
  const body = { foods: foods.map((f) => (f.index === undefined ? { food: f.label, grams: one(f.grams) }
    : f.replaced ? { index: f.index, food: f.label, grams: one(f.grams) } : { index: f.index, grams: one(f.grams) })) };
  const saved = await guarded(() => api(`/meals/${encodeURIComponent(meal.id)}`, { method: 'PUT', body }));
  if (!saved) return;
  draft = null;
  say(t('edit.saved', { energy: energy(saved.totals.kcal) }));
  history.back();
}

function ring(eaten, goal) {
  const r = 52, c = 2 * Math.PI * r;
  const share = goal ? Math.min(1, eaten / goal) : 0;
  return svg('svg', { class: 'ring', viewBox: '0 0 120 120', role: 'img', 'aria-label': t('today.eaten', { energy: energy(eaten) }) },
    svg('circle', { cx: 60, cy: 60, r, class: 'track' }),
    share > 0 ? svg('circle', { cx: 60, cy: 60, r, class: goal && eaten > goal ? 'fill over' : 'fill',
      'stroke-dasharray': `${c * share} ${c}`, transform: 'rotate(-90 60 60)' }) : '',
    svg('text', { x: 60, y: 58, class: 'big' }, String(round(energyValue(eaten)))),
    svg('text', { x: 60, y: 76, class: 'small' }, t(`unit.${energyUnit()}`)));
}

/// A macro against its goal; without one, its share of the day's energy (4, 4 and 9 kcal per gram).
function bar(label, value, goal, energyShare, unit = 'g') {
  const pct = goal ? Math.min(100, (value / goal) * 100) : Math.min(100, energyShare * 100);
  const fill = el('div', { class: 'fill' });
  fill.style.width = `${pct}%`;
  return el('div', { class: 'macro' }, el('span', { text: label }),
    el('div', { class: 'bar', role: 'presentation' }, fill),
    el('span', { class: 'num', text: goal ? `${one(value)} / ${round(goal)} ${unit}` : `${one(value)} ${unit}` }));
}

/// Today: what was eaten against the goal, macros, water, weight and the day's meals. The last answer is kept on this
/// device, so without a connection the day still shows (saying from when), with the meals waiting to be sent.
async function today() {
  const day = localDay();
  const q = `date=${day}&tz=${encodeURIComponent(zone())}`;
  await sendWaiting();
  const waiting = await pending();
  let data;
  try {
    const [meals, goals, water, weights] = await Promise.all([api(`/meals?${q}`), api('/user/goals'), api(`/water?${q}`),
      api(`/user/weight?from=${addDays(day, -90)}&to=${day}&tz=${encodeURIComponent(zone())}`)]);
    data = { meals: meals.meals, goals, water, weight: weights.weight.at(-1) ?? null };
    localStorage.setItem('foodmoment.today', JSON.stringify({ day, at: new Date().toISOString(), data }));
  } catch (error) {
    // Offline, the day shows the numbers last seen here and what waits on this device; anything else is said.
    if (!(error instanceof APIError && error.status === 0)) { fail(error); return; }
    const kept = JSON.parse(localStorage.getItem('foodmoment.today') ?? 'null');
    data = kept?.day === day ? kept.data : { meals: [], goals: null, water: { total_ml: 0 }, weight: null };
    const parts = [t('error.network')];
    if (kept?.day === day) parts.unshift(t('today.offline', { time: clock(kept.at) }));
    if (waiting.length) parts.unshift(t('result.queued'));
    say(parts.join(' '), 'error');
  }
  const { meals, goals, water } = data;
  const sum = (key) => meals.reduce((s, m) => s + (m.totals?.[key] ?? 0), 0);
  const eaten = sum('kcal') + waiting.reduce((s, w) => s + w.preview.kcal, 0);
  const goal = goals?.daily_kcal;
  const left = goal ? goal - eaten : null;
  const summary = el('section', { class: 'card today', 'aria-labelledby': 'today-title' },
    el('h2', { id: 'today-title', text: t('today.title') }),
    el('div', { class: 'summary' }, ring(eaten, goal),
      el('div', {},
        el('p', { class: 'left', id: 'kcal-left', text: left === null ? t('today.nogoal') : left >= 0 ? t('today.left', { energy: energy(left) }) : t('today.over', { energy: energy(-left) }) }),
        el('p', { class: 'eaten', id: 'kcal-eaten', text: t('today.eaten', { energy: energy(eaten) }) }),
        goal ? el('p', { class: 'help', text: t('today.goal', { energy: energy(goal) }) }) : null)),
    bar(t('macro.protein'), sum('protein_g'), goals?.protein_g, eaten ? (sum('protein_g') * 4) / eaten : 0),
    bar(t('macro.carbs'), sum('carbs_g'), goals?.carbs_g, eaten ? (sum('carbs_g') * 4) / eaten : 0),
    bar(t('macro.fat'), sum('fat_g'), goals?.fat_g, eaten ? (sum('fat_g') * 9) / eaten : 0),
    el('div', { class: 'water' }, el('span', { text: t('today.water') }),
      el('span', { class: 'num', id: 'water-ml', text: t('today.waterml', { ml: round(water.total_ml ?? 0) }) }),
      el('button', { type: 'button', id: 'add-water', text: t('today.addwater'), onclick: async () => {
        if (await guarded(() => api('/water', { method: 'POST', body: { milliliters: 250 }, headers: { 'Idempotency-Key': idempotencyKey() } }))) today();
      } })),
    weightRow(data.weight));
  const list = mealList(meals, today);
  for (const w of waiting) {
    const time = clock(w.preview.time);
    list.append(el('li', { class: 'meal pending' },
      el('div', {}, el('strong', { text: `${time} · ${t('today.pending')}` }), el('p', { class: 'foods-line', text: w.preview.names })),
      el('span', { class: 'kcal', text: energy(w.preview.kcal) })));
  }
  showFor('#/today', summary, el('section', { class: 'card' }, el('h2', { text: t('today.meals') }),
    meals.length || waiting.length ? list : el('p', { class: 'help', text: t('today.nomeals') })));
}

/// The last weight and a field to log today's, in the chosen unit. A jump that looks like a typo is confirmed first.
function weightRow(last) {
  const unit = weightUnit();
  const field = el('input', { id: 'weight', type: 'number', min: unit === 'lb' ? 5 : 2, max: unit === 'lb' ? 1100 : 500, step: 0.1,
    inputmode: 'decimal', 'aria-label': t('today.weightfield', { unit: t(`unit.${unit}`) }), placeholder: t(`unit.${unit}`) });
  const send = async (force) => {
    const value = Number(field.value);
    if (!value) { field.focus(); return; }
    const kilograms = Math.round((unit === 'lb' ? value / lbPerKg : value) * 100) / 100;
    try {
      await api('/user/weight', { method: 'POST', body: { kilograms, force: force || undefined }, headers: { 'Idempotency-Key': idempotencyKey() } });
    } catch (error) {
      if (error instanceof APIError && error.status === 422 && !force && confirm(t('today.weightconfirm', { message: error.message }))) { send(true); return; }
      fail(error);
      return;
    }
    say(t('today.weightlogged'));
    today();
  };
  return el('form', { class: 'weight', onsubmit: (e) => { e.preventDefault(); send(false); } },
    el('span', { text: t('today.weight') }),
    el('span', { class: 'num', id: 'weight-last', text: last ? t('today.lastweight', { weight: weight(last.kilograms), day: shortDay(last.time) }) : t('today.noweight') }),
    el('span', { class: 'field' }, field, el('button', { type: 'submit', id: 'log-weight', text: t('today.logweight') })));
}

/// Sends the meals waiting on this device (see queue.js) and says what happened.
async function sendWaiting() {
  if (!token()) return 0;
  const sent = await flush((item, error) => say(t('queue.refused', { reason: explain(error) }), 'error'));
  if (sent) say(t('queue.sent', { n: sent }));
  return sent;
}

/// Object URLs of kept photos already fetched this page (thumbnails are drawn again on each visit).
const thumbnails = new Map();

/// Meals (type, time, title, thumbnail, foods, energy) with edit and delete; `changed` redraws after a deletion.
function mealList(meals, changed, withDay = false) {
  const list = el('ul', { class: 'meals', id: 'meals' });
  for (const m of meals) {
    const when = withDay ? `${shortDay(m.time)} ${clock(m.time)}` : clock(m.time);
    const names = m.foods.map(foodLabel).join(' · ');
    const hash = m.photos?.[0]?.hash;
    const thumb = hash ? el('img', { class: 'thumb', alt: '', width: 56, height: 56 }) : el('span', { class: 'thumb none', 'aria-hidden': 'true', text: m.foods[0]?.emoji ?? '🍽️' });
    if (hash) {
      if (thumbnails.has(hash)) thumb.src = thumbnails.get(hash);
      else imageURL(hash).then((url) => { if (url) { thumbnails.set(hash, url); thumb.src = url; } });
    }
    list.append(el('li', { class: 'meal' }, thumb,
      el('div', {}, el('strong', { text: `${t(`meal.${m.type}`)} · ${when}` }), el('p', { class: 'title', text: m.title }),
        el('p', { class: 'foods-line', text: names })),
      el('span', { class: 'kcal', text: energy(m.totals.kcal) }),
      el('span', { class: 'meal-actions' },
        el('button', { type: 'button', class: 'edit', 'aria-label': t('today.edit', { title: m.title }), text: '✎', onclick: () => editMeal(m) }),
        el('button', { type: 'button', class: 'remove', 'aria-label': t('today.delete', { title: m.title }), text: '✕', onclick: async () => {
          if ((await guarded(() => api(`/meals/${encodeURIComponent(m.id)}`, { method: 'DELETE' }))) !== undefined) { say(t('today.deleted')); changed(); }
        } }))));
  }
  return list;
}

/// The diary: a search over past meals, the chosen day's week as a strip, a month calendar with a dot on each day
/// with meals, and the chosen day's meals (or what the search found).
let diaryDay = null, diaryQuery = '';
async function diary() {
  diaryDay = diaryDay ?? localDay();
  const [year, month] = diaryDay.split('-').map(Number);
  const monthText = `${year}-${String(month).padStart(2, '0')}`;
  const q = `tz=${encodeURIComponent(zone())}`;
  const data = await guarded(async () => {
    const [report, week, meals, found] = await Promise.all([api(`/stats/monthly?month=${monthText}&${q}`), api(`/stats/weekly?week=${diaryDay}&${q}`),
      api(`/meals?date=${diaryDay}&${q}`), diaryQuery ? api(`/meals/search?q=${encodeURIComponent(diaryQuery)}&limit=50`) : null]);
    return { report, week, meals: meals.meals, found };
  });
  if (!data) return;
  const counts = Object.fromEntries([...(data.report.days ?? []), ...(data.week.days ?? [])].map((d) => [d.day, d.meals]));
  const lead = (dayDate(`${monthText}-01`).getUTCDay() + 6) % 7;   // weeks start on Monday
  const daysIn = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const names = language() === 'zh' ? ['一', '二', '三', '四', '五', '六', '日'] : ['Mo', 'Tu', 'We', 'Th', 'Fr', 'Sa', 'Su'];
  const dayButton = (day, label) => {
    const count = counts[day] ?? 0;
    return el('button', { type: 'button', class: `day${count ? ' has' : ''}${day === diaryDay ? ' chosen' : ''}${day === localDay() ? ' today' : ''}`,
      'data-date': day, 'aria-pressed': day === diaryDay ? 'true' : 'false', 'aria-label': t('diary.day', { day, count }),
      onclick: () => { diaryDay = day; diaryQuery = ''; diary(); } }, label, count ? el('span', { class: 'dot', 'aria-hidden': 'true' }) : null);
  };
  const monday = addDays(diaryDay, -((dayDate(diaryDay).getUTCDay() + 6) % 7));
  const strip = el('div', { class: 'calendar strip', id: 'week-strip', role: 'group', 'aria-label': t('diary.week', { day: monday }) },
    ...Array.from({ length: 7 }, (_, i) => {
      const day = addDays(monday, i);
      return dayButton(day, `${names[i]} ${Number(day.slice(8))}`);
    }));
  const grid = el('div', { class: 'calendar', id: 'month-grid', role: 'group', 'aria-label': monthText },
    ...names.map((n) => el('span', { class: 'dow', 'aria-hidden': 'true', text: n })),
    ...Array.from({ length: lead }, () => el('span', { class: 'pad' })));
  for (let d = 1; d <= daysIn; d++) grid.append(dayButton(`${monthText}-${String(d).padStart(2, '0')}`, String(d)));
  const shift = (k) => { diaryDay = new Date(Date.UTC(year, month - 1 + k, 1)).toISOString().slice(0, 10); diaryQuery = ''; diary(); };
  const search = el('input', { id: 'meal-search', type: 'search', value: diaryQuery, 'aria-label': t('diary.search'), placeholder: t('diary.search') });
  const searchForm = el('form', { class: 'row search-meals', role: 'search', onsubmit: (e) => { e.preventDefault(); diaryQuery = search.value.trim(); diary(); } },
    search, el('button', { type: 'submit', id: 'meal-search-go', text: t('diary.searchbutton') }));
  const dayCard = data.found
    ? el('section', { class: 'card', id: 'search-results' },
      el('h2', { text: data.found.total ? t('diary.found', { q: diaryQuery, n: data.found.total }) : t('diary.notfound', { q: diaryQuery }) }),
      data.found.meals.length ? mealList(data.found.meals, diary, true) : null,
      el('button', { type: 'button', id: 'clear-search', text: t('diary.clear'), onclick: () => { diaryQuery = ''; diary(); } }))
    : el('section', { class: 'card' }, el('h2', { id: 'diary-day', text: dayText(diaryDay, { weekday: 'long', month: 'long', day: 'numeric' }) }),
      data.meals.length ? mealList(data.meals, diary) : el('p', { class: 'help', text: t('diary.nomeals') }));
  const calendar = el('section', { class: 'card' }, strip,
    el('div', { class: 'month' },
      el('button', { type: 'button', 'aria-label': t('diary.prev'), text: '‹', onclick: () => shift(-1) }),
      el('strong', { text: dayText(`${monthText}-15`, { year: 'numeric', month: 'long' }) }),
      el('button', { type: 'button', 'aria-label': t('diary.next'), text: '›', onclick: () => shift(1) })),
    grid);
  // What a search found comes first; otherwise the calendar, then the chosen day.
  const head = el('section', { class: 'card' }, el('h2', { text: t('diary.title') }), searchForm);
  if (data.found) showFor('#/diary', head, dayCard, calendar); else showFor('#/diary', head, calendar, dayCard);
}

/// Stats for the week, month or year: kcal per day (or month) against the goal, macro split, streak, the days logged
/// as a grid, the week's insights and the achievements unlocked.
let statsRange = 'week';
async function stats() {
  const q = `tz=${encodeURIComponent(zone())}`;
  const path = { week: '/stats/weekly', month: '/stats/monthly', year: '/stats/monthly' }[statsRange];
  const data = await guarded(async () => {
    const [goals, insights, achievements] = await Promise.all([api('/user/goals'), api(`/stats/insights?${q}`), api('/user/achievements')]);
    const extra = { goals, insights: insights.insights, achievements: achievements.achievements };
    if (statsRange !== 'year') return { ...extra, reports: [await api(`${path}?${q}`)] };
    // A year: the twelve months' reports, one bar per month (average per logged day).
    const year = Number(localDay().slice(0, 4)), last = Number(localDay().slice(5, 7));
    const months = Array.from({ length: last }, (_, i) => `${year}-${String(i + 1).padStart(2, '0')}`);
    return { ...extra, reports: await Promise.all(months.map((m) => api(`/stats/monthly?month=${m}&${q}`))) };
  });
  if (!data) return;
  const { goals, reports } = data;
  const report = reports[reports.length - 1];
  const bars = statsRange === 'year'
    ? reports.map((r) => ({ label: r.current.start.slice(5, 7), kcal: r.current.average_per_logged_day.kcal, logged: r.current.days_with_data > 0 }))
    : report.days.map((d) => ({ label: d.day.slice(8), kcal: d.totals.kcal, logged: d.meals > 0 }));
  const goal = goals?.daily_kcal;
  const w = 320, h = 160, top = 10, bottom = 20, peak = Math.max(goal ?? 0, ...bars.map((b) => b.kcal), 100) * 1.1;
  const y = (v) => top + (h - top - bottom) * (1 - v / peak);
  const step = w / Math.max(1, bars.length);
  const chart = svg('svg', { class: 'chart', viewBox: `0 0 ${w} ${h}`, role: 'img', 'aria-label': t('stats.chart') },
    ...bars.map((b, i) => svg('rect', { x: i * step + step * 0.15, y: y(b.kcal), width: step * 0.7, height: Math.max(0, h - bottom - y(b.kcal)),
      class: goal && b.kcal > goal * 1.1 ? 'bar over' : 'bar', 'data-kcal': round(b.kcal) }, svg('title', {}, `${b.label}: ${energy(b.kcal)}`))),
    ...bars.map((b, i) => (bars.length <= 12 || i % 5 === 0 ? svg('text', { x: i * step + step / 2, y: h - 5, class: 'tick' }, b.label) : '')),
    goal ? svg('line', { x1: 0, x2: w, y1: y(goal), y2: y(goal), class: 'goal' }) : '');
  const split = report.macro_split;
  const cur = reports.reduce((a, r) => a + r.current.days_with_data, 0);
  const avg = reports.reduce((a, r) => a + r.current.totals.kcal, 0) / Math.max(1, cur);
  const tabs = el('div', { class: 'segmented', role: 'group', 'aria-label': t('stats.title') },
    ...['week', 'month', 'year'].map((r) => el('button', { type: 'button', 'aria-pressed': r === statsRange ? 'true' : 'false', id: `range-${r}`,
      text: t(`stats.${r}`), onclick: () => { statsRange = r; stats(); } })));
  const attainment = report.goal_attainment;
  // Check-ins: one square per day of the range, filled when a meal was logged (future days are left out).
  const today = localDay();
  const days = reports.flatMap((r) => r.days ?? []).filter((d) => d.day <= today);
  const checkins = el('ul', { class: 'checkins', id: 'checkins', 'aria-label': t('stats.checkins') },
    ...days.map((d) => el('li', { class: d.meals > 0 ? 'on' : '', title: d.day,
      'aria-label': t(d.meals > 0 ? 'stats.checkin' : 'stats.nocheckin', { day: d.day }) })));
  const insights = el('ul', { class: 'insights', id: 'insights' }, ...data.insights.map((i) => el('li', { text: i.text })));
  const badges = data.achievements.length
    ? el('ul', { class: 'badges', id: 'achievements' }, ...data.achievements.map((a) => el('li', { title: a.unlocked_at.slice(0, 10) }, el('span', { 'aria-hidden': 'true', text: '🏅' }), ` ${a.title}`)))
    : el('p', { class: 'help', id: 'achievements', text: t('stats.noachievements') });
  showFor('#/stats', el('section', { class: 'card' }, el('h2', { text: t('stats.title') }), tabs,
    cur ? chart : el('p', { class: 'help', text: t('stats.nodata') }),
    cur ? el('p', { id: 'stats-avg', text: t('stats.avg', { energy: energy(avg) }) }) : null,
    split ? el('p', { text: t('stats.split', { p: round(split.protein_pct), c: round(split.carbs_pct), f: round(split.fat_pct) }) }) : null,
    attainment ? el('p', { text: t('stats.goaldays', { within: attainment.days_within_goal, days: attainment.days_with_data }) }) : null,
    el('p', { id: 'streak', text: t('stats.streak', { current: report.current_streak, longest: report.longest_streak }) }),
    el('h3', { text: t('stats.checkins') }), checkins),
  el('section', { class: 'card' }, el('h2', { text: t('stats.insights') }), data.insights.length ? insights : el('p', { class: 'help', text: t('stats.nodata') }),
    el('h3', { text: t('stats.achievements') }), badges));
}

async function settings() {
  const goals = await guarded(() => api('/user/goals'));
  if (goals === undefined) return;
  const choice = (id, options, current, onchange) => el('select', { id, onchange: (e) => onchange(e.target.value) },
    ...options.map(([value, text]) => el('option', { value, selected: value === current, text })));
  const lang = choice('language', Object.entries(languages), language(), (v) => { localStorage.setItem('foodmoment.lang', v); setLanguage(v); settings(); });
  const theme = choice('theme', ['system', 'light', 'dark'].map((v) => [v, t(`theme.${v}`)]), localStorage.getItem('foodmoment.theme') ?? 'system',
    (v) => { localStorage.setItem('foodmoment.theme', v); applyTheme(); });
  const energyChoice = choice('energy-unit', [['kcal', t('unit.kcal')], ['kJ', t('unit.kJ')]], energyUnit(), (v) => { localStorage.setItem('foodmoment.energy', v); settings(); });
  const weightChoice = choice('weight-unit', [['kg', t('unit.kg')], ['lb', t('unit.lb')]], weightUnit(), (v) => { localStorage.setItem('foodmoment.weight', v); settings(); });
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [zone()];
  const zoneChoice = choice('time-zone', [...new Set([zone(), ...zones])].sort().map((z) => [z, z]), zone(), async (v) => {
    if ((await guarded(() => api('/user/profile', { method: 'PUT', body: { time_zone: v } }))) === undefined) return;
    localStorage.setItem('foodmoment.tz', v);
    say(t('settings.tzsaved', { tz: v }));
  });
  const goal = el('input', { id: 'goal', type: 'number', min: round(energyValue(500)), max: round(energyValue(20000)), step: energyUnit() === 'kJ' ? 100 : 50,
    value: goals?.daily_kcal ? round(energyValue(goals.daily_kcal)) : '' });
  // Macro goals in grams a day (empty: none; Today then shows each macro's share of the energy instead).
  const macros = Object.fromEntries(['protein', 'carbs', 'fat'].map((m) => [m, el('input', { id: `goal-${m}`, type: 'number', min: 0, max: 1000,
    step: 1, inputmode: 'numeric', value: goals?.[`${m}_g`] ?? '' })]));
  const exportButton = (format) => el('button', { type: 'button', id: `export-${format}`, text: t(`settings.export${format}`), onclick: async () => {
    const name = await guarded(() => download(`/export?format=${format}&tz=${encodeURIComponent(zone())}`, `foodmoment.${format}`));
    if (name) say(t('settings.exported', { name }));
  } });
  showFor('#/settings', el('section', { class: 'card' }, el('h2', { text: t('settings.title') }),
    el('label', { for: 'language', text: t('settings.language') }), lang,
    el('label', { for: 'theme', text: t('settings.theme') }), theme,
    el('label', { for: 'energy-unit', text: t('settings.energy') }), energyChoice,
    el('label', { for: 'weight-unit', text: t('settings.weightunit') }), weightChoice,
    el('label', { for: 'time-zone', text: t('settings.timezone') }), zoneChoice,
    el('form', { class: 'goals', onsubmit: async (e) => {
      e.preventDefault();
      const value = Number(goal.value);
      const kcal = value ? Math.round(energyUnit() === 'kJ' ? value / kJPerKcal : value) : null;
      const grams = (input) => (Number(input.value) > 0 ? Number(input.value) : null);
      const body = { ...goals, daily_kcal: kcal, protein_g: grams(macros.protein), carbs_g: grams(macros.carbs), fat_g: grams(macros.fat) };
      if (await guarded(() => api('/user/goals', { method: 'PUT', body }))) say(t('settings.goalsaved'));
    } }, el('label', { for: 'goal', text: t('settings.goal', { unit: t(`unit.${energyUnit()}`) }) }), goal,
    el('div', { class: 'macro-goals' }, ...['protein', 'carbs', 'fat'].map((m) => el('div', {},
      el('label', { for: `goal-${m}`, text: `${t(`macro.${m}`)} (g)` }), macros[m]))),
    el('button', { type: 'submit', id: 'save-goals', text: t('settings.savegoal') }))),
  el('section', { class: 'card' }, el('h2', { text: t('settings.export') }),
    el('div', { class: 'actions' }, exportButton('json'), exportButton('csv'))),
  el('section', { class: 'card' },
    el('div', { class: 'actions' },
      el('button', { type: 'button', id: 'signout', text: t('settings.signout'), onclick: () => { setToken(null); location.hash = '#/signin'; } }),
      el('button', { type: 'button', id: 'delete-account', class: 'danger', text: t('settings.delete'), onclick: async () => {
        if (!confirm(t('settings.deleteconfirm'))) return;
        if ((await guarded(() => api('/user/account', { method: 'DELETE' }))) !== undefined) {
          setToken(null);
          say(t('settings.deleted'));
          location.hash = '#/signin';
        }
      } }))));
}

// MARK: - Routing, theme, start

function applyTheme() {
  const choice = localStorage.getItem('foodmoment.theme') ?? 'system';
  document.documentElement.dataset.theme = choice;
}

const screens = { '#/signin': signIn, '#/capture': capture, '#/result': result, '#/today': today, '#/diary': diary, '#/stats': stats,
  '#/settings': settings };

function route() {
  const signedIn = Boolean(token());
  let hash = location.hash || '#/today';
  if (!signedIn && hash !== '#/signin') hash = '#/signin';
  if (signedIn && hash === '#/signin') hash = '#/today';
  if (!screens[hash]) hash = '#/today';
  if (location.hash !== hash) history.replaceState(null, '', hash);
  document.querySelector('.tabs').hidden = !signedIn;
  for (const a of document.querySelectorAll('.tabs a')) {
    if (a.getAttribute('href') === hash) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  screens[hash]();
}

window.addEventListener('hashchange', route);
// A tab the person chooses starts clean; a message an action left ("Meal logged") stays on the screen it leads to.
for (const a of document.querySelectorAll('.tabs a')) a.addEventListener('click', () => say(''));
window.addEventListener('online', async () => { if (await sendWaiting() && location.hash === '#/today') today(); });
// The app shell offline (sw.js); a browser without service workers (or a page not from a secure origin) just goes on.
navigator.serviceWorker?.register('sw.js').catch(() => {});
applyTheme();
setLanguage(localStorage.getItem('foodmoment.lang') ?? (navigator.language?.startsWith('zh') ? 'zh' : 'en'));
// Back from Sign in with Apple: the answer is in the fragment (#id_token=…&state=…, or #error=…).
if (/^#(?:.*&)?(id_token|error)=/.test(location.hash)) finishApple().then(route); else route();
