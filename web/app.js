// FoodMoment in the browser: plain ES modules, no build step. Every value from the server or the user reaches the
// page through textContent or an attribute set by the DOM API (`el`), never as HTML, so a food named
// "<img onerror=…>" is shown as text; the server's Content-Security-Policy refuses inline script besides.
import { api, APIError, idempotencyKey, setToken, token } from './api.js';
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

/// "08:05" / "08:05 AM" in the page's language.
function clock(date) {
  return new Date(date).toLocaleTimeString(language() === 'zh' ? 'zh-CN' : 'en', { hour: '2-digit', minute: '2-digit' });
}

const round = (v) => Math.round(v);
const one = (v) => Math.round(v * 10) / 10;

function localDay(date = new Date()) {
  const p = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())}`;
}

const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

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
        await api('/user/profile');
        say('');
        location.hash = '#/today';
      } catch (error) {
        setToken(null);
        say(error instanceof APIError && error.status === 401 ? t('signin.bad') : explain(error), 'error');
      }
    },
  },
  el('h2', { text: t('signin.title') }),
  el('p', { class: 'help', text: t('signin.help') }),
  el('label', { for: 'token', text: t('signin.token') }), input,
  el('button', { type: 'submit', class: 'primary', text: t('signin.submit') }));
  show(form);
  input.focus();
}

function capture() {
  const input = el('input', { id: 'photo', type: 'file', accept: 'image/*', capture: 'environment', class: 'visually-hidden' });
  input.addEventListener('change', () => { if (input.files.length) analyze(input.files[0]); });
  const zone = el('div', { class: 'drop', id: 'drop' },
    el('p', { class: 'help', text: t('capture.help') }),
    el('label', { for: 'photo', class: 'button primary', tabindex: '0', role: 'button', text: t('capture.pick'),
      onkeydown: (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); input.click(); } } }),
    input,
    el('p', { class: 'hint', text: t('capture.drop') }));
  zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    if (e.dataTransfer.files.length) analyze(e.dataTransfer.files[0]);
  });
  show(el('section', { class: 'card' }, el('h2', { text: t('capture.title') }), zone));
}

/// Checks the file here (type and size), sends it, and shows the result.
async function analyze(file) {
  if (!photoTypes.includes(file.type) && !/\.(jpe?g|png|heic|heif|webp)$/i.test(file.name)) {
    say(t('error.notimage', { name: file.name }), 'error');
    return;
  }
  if (file.size > maxPhotoMB * 1024 * 1024) {
    say(t('error.toolarge', { name: file.name, mb: maxPhotoMB }), 'error');
    return;
  }
  say('');
  const progress = el('div', { class: 'card busy', role: 'progressbar', 'aria-busy': 'true', 'aria-label': t('capture.busy') },
    el('div', { class: 'spinner', 'aria-hidden': 'true' }), el('p', { id: 'progress-text', text: t('capture.uploading') }));
  show(progress);
  const sent = setTimeout(() => { const p = document.getElementById('progress-text'); if (p) p.textContent = t('capture.busy'); }, 300);
  const type = photoTypes.includes(file.type) ? file.type : 'image/jpeg';
  const answer = await guarded(() => api('/food/analyze?store_photo=true', { method: 'POST', body: new Blob([file], { type }) }));
  clearTimeout(sent);
  if (!answer) { capture(); return; }
  draft = {
    answer,
    photo: URL.createObjectURL(file),
    foods: answer.detected_foods.map((f) => ({ ...f, startGrams: f.grams })),
  };
  location.hash = '#/result';
}

/// A food's numbers for `grams`: the analysis's values scaled (they are per its own grams, from the tables).
function scaled(food, grams) {
  const k = food.startGrams > 0 ? grams / food.startGrams : 0;
  const v = (x) => (typeof x === 'number' ? x * k : null);
  return { kcal: v(food.calories), protein: v(food.protein_g), carbs: v(food.carbs_g), fat: v(food.fat_g),
    sugars: v(food.sugars_g), sodium: v(food.sodium_mg) };
}

/// Search-as-you-type over the nutrition tables (`GET /food/search`): a combobox whose list updates 200 ms after the
/// last key; ↓ enters the list, Enter or a click picks, Escape closes. `onPick(hit)` gets the chosen result.
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
      const found = await guarded(() => api(`/food/search?q=${encodeURIComponent(q)}&limit=6`));
      if (mine !== asked || !found) return;   // a later keystroke's answer wins
      list.replaceChildren(...found.results.map((hit, i) => el('li', {
        role: 'option', id: `${id}-hit-${i}`, tabindex: '-1', class: 'hit', 'aria-selected': 'false',
        onclick: () => pick(hit), onkeydown: (e) => { if (e.key === 'Enter') { e.preventDefault(); pick(hit); } },
      }, el('span', { text: hit.brand ? `${hit.name} (${hit.brand})` : hit.name }),
      el('span', { class: 'help', text: typeof hit.kcal_per_100g === 'number' ? `${round(hit.kcal_per_100g)} kcal / 100 g` : '' }))));
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
/// per 100 g as the numbers for 100 g.
function fromHit(hit, grams, box) {
  return { label: hit.food_id, name: hit.name, name_zh: '', emoji: '🍽️', color: '#888888', confidence: 1, bounding_box: box,
    grams, startGrams: 100, calories: hit.kcal_per_100g ?? null, protein_g: hit.protein_g_per_100g ?? null,
    carbs_g: hit.carbs_g_per_100g ?? null, fat_g: hit.fat_g_per_100g ?? null, source: 'user' };
}

function result() {
  if (!draft) { location.hash = '#/capture'; return; }
  const { answer, foods } = draft;
  const figure = el('figure', { class: 'photo' });
  const img = el('img', { src: draft.photo, alt: answer.ai_analysis, id: 'meal-photo' });
  const overlay = svg('svg', { class: 'boxes', viewBox: '0 0 100 100', preserveAspectRatio: 'none', 'aria-hidden': 'true' });
  figure.append(img, overlay);
  const list = el('ul', { class: 'foods', id: 'foods' });
  const total = el('p', { class: 'total', id: 'total', 'aria-live': 'polite' });

  function redraw() {
    overlay.replaceChildren();
    for (const f of foods.filter((x) => x.bounding_box)) {
      const b = f.bounding_box;
      // A dark outline under the food's colour, so a pale colour (rice's cream) still shows on a pale photo.
      const rect = { x: b.x * 100, y: b.y * 100, width: b.w * 100, height: b.h * 100, 'vector-effect': 'non-scaling-stroke' };
      overlay.append(svg('rect', { ...rect, class: 'box-shade' }), svg('rect', { ...rect, class: 'box', stroke: f.color }));
    }
    figure.querySelectorAll('.tag').forEach((n) => n.remove());
    for (const f of foods.filter((x) => x.bounding_box)) {
      const b = f.bounding_box;
      const tag = el('span', { class: 'tag', text: foodLabel(f) });
      tag.style.left = `${b.x * 100}%`;
      tag.style.top = `${b.y * 100}%`;
      tag.style.borderColor = f.color;
      figure.append(tag);
    }
    let kcal = 0, protein = 0, carbs = 0, fat = 0;
    for (const f of foods) {
      const n = scaled(f, f.grams);
      kcal += n.kcal ?? 0; protein += n.protein ?? 0; carbs += n.carbs ?? 0; fat += n.fat ?? 0;
    }
    total.textContent = `${t('result.total')}: ${round(kcal)} kcal · ${t('macro.protein')} ${one(protein)} g · `
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
      kcal.textContent = n.kcal === null ? '— kcal' : `${round(n.kcal)} kcal`;
      redraw();
    };
    number.addEventListener('input', () => update(number.value));
    slider.addEventListener('input', () => update(slider.value));
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
            foods[foods.indexOf(f)] = fromHit(hit, f.grams, f.bounding_box);   // the new food where the old was seen
            result();
          });
          item.append(box);
          box.querySelector('input').focus();
        } }),
      el('button', { type: 'button', class: 'remove', 'aria-label': t('result.remove', { name }), text: '✕',
        onclick: () => { foods.splice(foods.indexOf(f), 1); item.remove(); redraw(); if (!foods.length) say(t('result.empty')); } }));
    item.querySelector('.swatch').style.background = f.color;
    update(f.grams);
    return item;
  }

  const logButton = el('button', { type: 'button', class: 'primary', id: 'log', text: t('result.log'), onclick: logMeal });
  for (const f of foods) list.append(row(f));
  const body = foods.length ? list : el('p', { class: 'help', text: t('result.none') });
  const add = el('div', { class: 'add' }, el('label', { for: 'add-food', text: t('result.add') }),
    foodSearch('add-food', t('result.search'), (hit) => { foods.push(fromHit(hit, 100, null)); result(); }));
  show(el('section', { class: 'card' }, el('h2', { text: t('result.title') }),
    el('div', { class: 'result-layout' }, el('div', { class: 'photo-column' }, figure),
      el('div', {}, body, add, total,
        el('div', { class: 'actions' }, logButton,
          el('button', { type: 'button', text: t('result.again'), onclick: () => { draft = null; location.hash = '#/capture'; } }))))));
  redraw();
}

async function logMeal() {
  const button = document.getElementById('log');
  button.disabled = true;
  button.textContent = t('result.logging');
  const body = {
    image_id: draft.answer.image_id,
    tz: timeZone,
    foods: draft.foods.map((f) => ({ food: f.label, grams: Math.round(f.grams * 10) / 10, box: f.bounding_box ?? undefined })),
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
      location.hash = '#/today';
      return;
    }
    fail(error);
    button.disabled = false;
    button.textContent = t('result.log');
    return;
  }
  draft = null;
  say(t('result.logged', { kcal: round(meal.totals.kcal) }));
  location.hash = '#/today';
}

function ring(eaten, goal) {
  const r = 52, c = 2 * Math.PI * r;
  const share = goal ? Math.min(1, eaten / goal) : 0;
  return svg('svg', { class: 'ring', viewBox: '0 0 120 120', role: 'img', 'aria-label': t('today.eaten', { kcal: round(eaten) }) },
    svg('circle', { cx: 60, cy: 60, r, class: 'track' }),
    share > 0 ? svg('circle', { cx: 60, cy: 60, r, class: goal && eaten > goal ? 'fill over' : 'fill',
      'stroke-dasharray': `${c * share} ${c}`, transform: 'rotate(-90 60 60)' }) : '',
    svg('text', { x: 60, y: 58, class: 'big' }, String(round(eaten))),
    svg('text', { x: 60, y: 76, class: 'small' }, 'kcal'));
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

async function today() {
  const day = localDay();
  const q = `date=${day}&tz=${encodeURIComponent(timeZone)}`;
  await sendWaiting();
  const waiting = await pending();
  let data;
  try {
    const [meals, goals, water] = await Promise.all([api(`/meals?${q}`), api('/user/goals'), api(`/water?${q}`)]);
    data = { meals: meals.meals, goals, water };
  } catch (error) {
    // Offline, the day still shows what waits on this device; anything else is said and nothing is drawn.
    if (!(error instanceof APIError && error.status === 0)) { fail(error); return; }
    if (waiting.length) say(`${t('result.queued')} ${t('error.network')}`, 'error'); else say(t('error.network'), 'error');
    data = { meals: [], goals: null, water: { total_ml: 0 } };
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
        el('p', { class: 'left', id: 'kcal-left', text: left === null ? t('today.nogoal') : left >= 0 ? t('today.left', { kcal: round(left) }) : t('today.over', { kcal: round(-left) }) }),
        el('p', { class: 'eaten', id: 'kcal-eaten', text: t('today.eaten', { kcal: round(eaten) }) }),
        goal ? el('p', { class: 'help', text: t('today.goal', { kcal: round(goal) }) }) : null)),
    bar(t('macro.protein'), sum('protein_g'), goals?.protein_g, eaten ? (sum('protein_g') * 4) / eaten : 0),
    bar(t('macro.carbs'), sum('carbs_g'), goals?.carbs_g, eaten ? (sum('carbs_g') * 4) / eaten : 0),
    bar(t('macro.fat'), sum('fat_g'), goals?.fat_g, eaten ? (sum('fat_g') * 9) / eaten : 0),
    el('div', { class: 'water' }, el('span', { text: t('today.water') }),
      el('span', { class: 'num', id: 'water-ml', text: t('today.waterml', { ml: round(water.total_ml ?? 0) }) }),
      el('button', { type: 'button', id: 'add-water', text: t('today.addwater'), onclick: async () => {
        if (await guarded(() => api('/water', { method: 'POST', body: { milliliters: 250 }, headers: { 'Idempotency-Key': idempotencyKey() } }))) today();
      } })));
  const list = mealList(meals, today);
  for (const w of waiting) {
    const time = clock(w.preview.time);
    list.append(el('li', { class: 'meal pending' },
      el('div', {}, el('strong', { text: `${time} · ${t('today.pending')}` }), el('p', { class: 'foods-line', text: w.preview.names })),
      el('span', { class: 'kcal', text: `${round(w.preview.kcal)} kcal` })));
  }
  show(summary, el('section', { class: 'card' }, el('h2', { text: t('today.meals') }),
    meals.length || waiting.length ? list : el('p', { class: 'help', text: t('today.nomeals') })));
}

/// Sends the meals waiting on this device (see queue.js) and says what happened.
async function sendWaiting() {
  if (!token()) return 0;
  const sent = await flush((item, error) => say(t('queue.refused', { reason: explain(error) }), 'error'));
  if (sent) say(t('queue.sent', { n: sent }));
  return sent;
}

/// A day's meals (type, time, title, foods, kcal) with delete; `changed` redraws the screen after a deletion.
function mealList(meals, changed) {
  const list = el('ul', { class: 'meals', id: 'meals' });
  for (const m of meals) {
    const time = clock(m.time);
    const names = m.foods.map(foodLabel).join(' · ');
    list.append(el('li', { class: 'meal' },
      el('div', {}, el('strong', { text: `${t(`meal.${m.type}`)} · ${time}` }), el('p', { class: 'title', text: m.title }),
        el('p', { class: 'foods-line', text: names })),
      el('span', { class: 'kcal', text: `${round(m.totals.kcal)} kcal` }),
      el('button', { type: 'button', class: 'remove', 'aria-label': t('today.delete', { title: m.title }), text: '✕', onclick: async () => {
        if ((await guarded(() => api(`/meals/${encodeURIComponent(m.id)}`, { method: 'DELETE' }))) !== undefined) { say(t('today.deleted')); changed(); }
      } })));
  }
  return list;
}

/// The diary: a month calendar with a dot on each day with meals, and the chosen day's meals.
let diaryDay = null;
async function diary() {
  diaryDay = diaryDay ?? localDay();
  const [year, month] = diaryDay.split('-').map(Number);
  const monthText = `${year}-${String(month).padStart(2, '0')}`;
  const q = `tz=${encodeURIComponent(timeZone)}`;
  const data = await guarded(async () => {
    const [report, meals] = await Promise.all([api(`/stats/monthly?month=${monthText}&${q}`), api(`/meals?date=${diaryDay}&${q}`)]);
    return { report, meals: meals.meals };
  });
  if (!data) return;
  const counts = Object.fromEntries((data.report.days ?? []).map((d) => [d.day, d.meals]));
  const first = new Date(year, month - 1, 1);
  const lead = (first.getDay() + 6) % 7;   // weeks start on Monday
  const daysIn = new Date(year, month, 0).getDate();
  const names = language() === 'zh' ? ['一', '二', '三', '四', '五', '六', '日'] : ['Mo', 'Tu', 'We', 'Th', 'Fr', 'Sa', 'Su'];
  const grid = el('div', { class: 'calendar', role: 'group', 'aria-label': monthText },
    ...names.map((n) => el('span', { class: 'dow', 'aria-hidden': 'true', text: n })),
    ...Array.from({ length: lead }, () => el('span', { class: 'pad' })));
  for (let d = 1; d <= daysIn; d++) {
    const day = `${monthText}-${String(d).padStart(2, '0')}`;
    const count = counts[day] ?? 0;
    grid.append(el('button', { type: 'button', class: `day${count ? ' has' : ''}${day === diaryDay ? ' chosen' : ''}${day === localDay() ? ' today' : ''}`,
      'data-date': day, 'aria-pressed': day === diaryDay ? 'true' : 'false', 'aria-label': t('diary.day', { day, count }),
      onclick: () => { diaryDay = day; diary(); } }, String(d), count ? el('span', { class: 'dot', 'aria-hidden': 'true' }) : null));
  }
  const shift = (k) => { const m = new Date(year, month - 1 + k, 1); diaryDay = localDay(m); diary(); };
  const title = new Date(year, month - 1, 1).toLocaleDateString(language() === 'zh' ? 'zh-CN' : 'en', { year: 'numeric', month: 'long' });
  show(el('section', { class: 'card' }, el('h2', { text: t('diary.title') }),
    el('div', { class: 'month' },
      el('button', { type: 'button', 'aria-label': t('diary.prev'), text: '‹', onclick: () => shift(-1) }),
      el('strong', { text: title }),
      el('button', { type: 'button', 'aria-label': t('diary.next'), text: '›', onclick: () => shift(1) })),
    grid),
  el('section', { class: 'card' }, el('h2', { id: 'diary-day', text: new Date(`${diaryDay}T12:00:00`).toLocaleDateString(language() === 'zh' ? 'zh-CN' : 'en', { weekday: 'long', month: 'long', day: 'numeric' }) }),
    data.meals.length ? mealList(data.meals, diary) : el('p', { class: 'help', text: t('diary.nomeals') })));
}

/// Stats for the week, month or year: kcal per day (or month) against the goal, macro split, streak.
let statsRange = 'week';
async function stats() {
  const q = `tz=${encodeURIComponent(timeZone)}`;
  const path = { week: '/stats/weekly', month: '/stats/monthly', year: '/stats/monthly' }[statsRange];
  const data = await guarded(async () => {
    const goals = await api('/user/goals');
    if (statsRange !== 'year') return { goals, reports: [await api(`${path}?${q}`)] };
    // A year: the twelve months' reports, one bar per month (average per logged day).
    const year = new Date().getFullYear();
    const months = Array.from({ length: new Date().getMonth() + 1 }, (_, i) => `${year}-${String(i + 1).padStart(2, '0')}`);
    return { goals, reports: await Promise.all(months.map((m) => api(`/stats/monthly?month=${m}&${q}`))) };
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
      class: goal && b.kcal > goal * 1.1 ? 'bar over' : 'bar', 'data-kcal': round(b.kcal) }, svg('title', {}, `${b.label}: ${round(b.kcal)} kcal`))),
    ...bars.map((b, i) => (bars.length <= 12 || i % 5 === 0 ? svg('text', { x: i * step + step / 2, y: h - 5, class: 'tick' }, b.label) : '')),
    goal ? svg('line', { x1: 0, x2: w, y1: y(goal), y2: y(goal), class: 'goal' }) : '');
  const split = report.macro_split;
  const cur = reports.reduce((a, r) => a + r.current.days_with_data, 0);
  const avg = reports.reduce((a, r) => a + r.current.totals.kcal, 0) / Math.max(1, cur);
  const tabs = el('div', { class: 'segmented', role: 'group', 'aria-label': t('stats.title') },
    ...['week', 'month', 'year'].map((r) => el('button', { type: 'button', 'aria-pressed': r === statsRange ? 'true' : 'false', id: `range-${r}`,
      text: t(`stats.${r}`), onclick: () => { statsRange = r; stats(); } })));
  const attainment = report.goal_attainment;
  show(el('section', { class: 'card' }, el('h2', { text: t('stats.title') }), tabs,
    cur ? chart : el('p', { class: 'help', text: t('stats.nodata') }),
    cur ? el('p', { id: 'stats-avg', text: t('stats.avg', { kcal: round(avg) }) }) : null,
    split ? el('p', { text: t('stats.split', { p: round(split.protein_pct), c: round(split.carbs_pct), f: round(split.fat_pct) }) }) : null,
    attainment ? el('p', { text: t('stats.goaldays', { within: attainment.days_within_goal, days: attainment.days_with_data }) }) : null,
    el('p', { id: 'streak', text: t('stats.streak', { current: report.current_streak, longest: report.longest_streak }) })));
}

async function settings() {
  const goals = await guarded(() => api('/user/goals'));
  if (goals === undefined) return;
  const lang = el('select', { id: 'language', onchange: (e) => { localStorage.setItem('foodmoment.lang', e.target.value); setLanguage(e.target.value); settings(); } },
    ...Object.entries(languages).map(([code, name]) => el('option', { value: code, selected: code === language(), text: name })));
  const theme = el('select', { id: 'theme', onchange: (e) => { localStorage.setItem('foodmoment.theme', e.target.value); applyTheme(); } },
    ...['system', 'light', 'dark'].map((v) => el('option', { value: v, selected: (localStorage.getItem('foodmoment.theme') ?? 'system') === v, text: t(`theme.${v}`) })));
  const goal = el('input', { id: 'goal', type: 'number', min: 500, max: 20000, step: 50, value: goals?.daily_kcal ?? '' });
  show(el('section', { class: 'card' }, el('h2', { text: t('settings.title') }),
    el('label', { for: 'language', text: t('settings.language') }), lang,
    el('label', { for: 'theme', text: t('settings.theme') }), theme,
    el('form', { class: 'row', onsubmit: async (e) => {
      e.preventDefault();
      const value = Number(goal.value);
      if (await guarded(() => api('/user/goals', { method: 'PUT', body: { ...goals, daily_kcal: value || null } }))) say(t('settings.goalsaved'));
    } }, el('label', { for: 'goal', text: t('settings.goal') }), goal, el('button', { type: 'submit', text: t('settings.savegoal') })),
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
route();
