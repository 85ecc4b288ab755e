// Every string the app shows, in English and Chinese. `t(key, values)` fills {name} placeholders; the caller puts the
// result in the page with textContent, never as HTML.
const strings = {
  en: {
    'app.name': 'FoodMoment',
    'nav.today': 'Today', 'nav.capture': 'Add meal', 'nav.diary': 'Diary', 'nav.stats': 'Stats', 'nav.settings': 'Settings',
    'diary.title': 'Diary', 'diary.prev': 'Previous month', 'diary.next': 'Next month', 'diary.day': '{day}: {count} meals',
    'diary.nomeals': 'Nothing logged on this day.',
    'stats.title': 'Stats', 'stats.week': 'Week', 'stats.month': 'Month', 'stats.year': 'Year',
    'stats.chart': 'kcal per day against the goal', 'stats.avg': '{kcal} kcal a day on average (days with meals)',
    'stats.streak': 'Days in a row: {current} (longest {longest})', 'stats.split': 'Energy from protein {p} %, carbs {c} %, fat {f} %',
    'stats.goaldays': 'Within 10 % of the goal: {within} of {days} logged days', 'stats.nodata': 'No meals in this period yet.',
    'signin.title': 'Sign in',
    'signin.help': 'Paste the personal token your server gave you (foodmoment serve token create --user NAME).',
    'signin.token': 'Personal token', 'signin.submit': 'Sign in',
    'signin.bad': 'That token was not accepted. Check it and paste it again.',
    'signin.empty': 'Paste your token first.',
    'capture.title': 'Add a meal',
    'capture.help': 'Take a photo of your meal, or choose one. You can also drop photos here.',
    'capture.pick': 'Take or choose a photo', 'capture.drop': 'Drop a photo here',
    'capture.busy': 'Analysing your photo…', 'capture.uploading': 'Sending the photo…',
    'result.title': 'Your meal', 'result.none': 'No food we know is in this photo. Try another photo, or add the foods by hand.',
    'result.grams': 'Grams of {name}', 'result.remove': 'Remove {name}', 'result.total': 'Total',
    'result.log': 'Log meal', 'result.logged': 'Meal logged: {kcal} kcal.', 'result.logging': 'Logging…',
    'result.queued': 'No connection: the meal is kept on this device and will be sent when you are back online.',
    'today.pending': 'waiting to be sent', 'queue.sent': 'Meals sent that were waiting: {n}.',
    'queue.refused': 'A meal kept on this device was refused by the server: {reason}',
    'result.change': 'Change {name} to another food', 'result.add': 'Add a food', 'result.search': 'Search foods (e.g. banana, 米饭)',
    'result.again': 'Analyse another photo', 'result.empty': 'Every food was removed: add a photo again to log a meal.',
    'today.title': 'Today', 'today.left': '{kcal} kcal left', 'today.over': '{kcal} kcal over',
    'today.eaten': '{kcal} kcal eaten', 'today.goal': 'Goal {kcal} kcal', 'today.nogoal': 'No daily goal set',
    'today.meals': 'Meals', 'today.nomeals': 'Nothing logged today yet.', 'today.delete': 'Delete {title}',
    'today.deleted': 'Meal deleted.', 'today.water': 'Water', 'today.addwater': '+250 ml', 'today.waterml': '{ml} ml',
    'macro.protein': 'Protein', 'macro.carbs': 'Carbs', 'macro.fat': 'Fat', 'macro.sugars': 'Sugars', 'macro.sodium': 'Sodium',
    'meal.breakfast': 'Breakfast', 'meal.lunch': 'Lunch', 'meal.dinner': 'Dinner', 'meal.snack': 'Snack',
    'settings.title': 'Settings', 'settings.language': 'Language', 'settings.theme': 'Appearance',
    'theme.system': 'As the device', 'theme.light': 'Light', 'theme.dark': 'Dark',
    'settings.goal': 'Daily goal (kcal)', 'settings.savegoal': 'Save goal', 'settings.goalsaved': 'Goal saved.',
    'settings.signout': 'Sign out', 'settings.delete': 'Delete my account',
    'settings.deleteconfirm': 'Delete your account, every meal and every kept photo? This cannot be undone.',
    'settings.deleted': 'Your account was deleted.',
    'error.network': 'The server cannot be reached. Check your connection and try again.',
    'error.notimage': '{name} is not a photo. Choose a JPEG, PNG, HEIC or WebP image.',
    'error.toolarge': '{name} is larger than {mb} MB. Choose a smaller photo.',
    'error.unauthorized': 'You were signed out. Sign in again.',
    'error.ratelimited': 'Too many photos at once. Try again in {seconds} seconds.',
    'error.server': 'Something went wrong on the server. Try again in a moment.',
    'error.unreadable': 'This photo could not be read. Try another one.',
  },
  zh: {
    'app.name': 'FoodMoment',
    'nav.today': '今天', 'nav.capture': '记一餐', 'nav.diary': '日记', 'nav.stats': '统计', 'nav.settings': '设置',
    'diary.title': '日记', 'diary.prev': '上个月', 'diary.next': '下个月', 'diary.day': '{day}：{count} 餐',
    'diary.nomeals': '这一天没有记录。',
    'stats.title': '统计', 'stats.week': '周', 'stats.month': '月', 'stats.year': '年',
    'stats.chart': '每日热量与目标', 'stats.avg': '有记录的日子平均每天 {kcal} 千卡',
    'stats.streak': '连续记录 {current} 天（最长 {longest} 天）', 'stats.split': '能量来自蛋白质 {p}%、碳水 {c}%、脂肪 {f}%',
    'stats.goaldays': '{days} 天中有 {within} 天在目标的 10% 以内', 'stats.nodata': '这段时间还没有记录。',
    'signin.title': '登录',
    'signin.help': '粘贴服务器给你的个人令牌（foodmoment serve token create --user 名字）。',
    'signin.token': '个人令牌', 'signin.submit': '登录',
    'signin.bad': '令牌无效。请检查后重新粘贴。',
    'signin.empty': '请先粘贴令牌。',
    'capture.title': '记一餐',
    'capture.help': '给这顿饭拍张照片，或选择一张。也可以把照片拖到这里。',
    'capture.pick': '拍照或选择照片', 'capture.drop': '把照片拖到这里',
    'capture.busy': '正在分析照片…', 'capture.uploading': '正在上传照片…',
    'result.title': '这一餐', 'result.none': '照片里没有我们认识的食物。换一张照片，或手动添加食物。',
    'result.grams': '{name}的克数', 'result.remove': '删除{name}', 'result.total': '合计',
    'result.log': '记录这一餐', 'result.logged': '已记录：{kcal} 千卡。', 'result.logging': '正在记录…',
    'result.queued': '没有网络：这一餐先保存在本设备上，联网后自动发送。',
    'today.pending': '等待发送', 'queue.sent': '已发送等待中的餐食：{n} 条。',
    'queue.refused': '服务器拒绝了一条保存在本设备上的餐食：{reason}',
    'result.change': '把{name}换成别的食物', 'result.add': '添加食物', 'result.search': '搜索食物（如 banana、米饭）',
    'result.again': '再分析一张', 'result.empty': '食物都删掉了：重新添加照片才能记录。',
    'today.title': '今天', 'today.left': '还剩 {kcal} 千卡', 'today.over': '超出 {kcal} 千卡',
    'today.eaten': '已摄入 {kcal} 千卡', 'today.goal': '目标 {kcal} 千卡', 'today.nogoal': '还没有设置每日目标',
    'today.meals': '餐食', 'today.nomeals': '今天还没有记录。', 'today.delete': '删除{title}',
    'today.deleted': '已删除这一餐。', 'today.water': '饮水', 'today.addwater': '+250 毫升', 'today.waterml': '{ml} 毫升',
    'macro.protein': '蛋白质', 'macro.carbs': '碳水', 'macro.fat': '脂肪', 'macro.sugars': '糖', 'macro.sodium': '钠',
    'meal.breakfast': '早餐', 'meal.lunch': '午餐', 'meal.dinner': '晚餐', 'meal.snack': '加餐',
    'settings.title': '设置', 'settings.language': '语言', 'settings.theme': '外观',
    'theme.system': '跟随设备', 'theme.light': '浅色', 'theme.dark': '深色',
    'settings.goal': '每日目标（千卡）', 'settings.savegoal': '保存目标', 'settings.goalsaved': '目标已保存。',
    'settings.signout': '退出登录', 'settings.delete': '删除我的账户',
    'settings.deleteconfirm': '删除账户、所有餐食和保存的照片？此操作无法撤销。',
    'settings.deleted': '账户已删除。',
    'error.network': '无法连接服务器。请检查网络后重试。',
    'error.notimage': '{name} 不是照片。请选择 JPEG、PNG、HEIC 或 WebP 图片。',
    'error.toolarge': '{name} 超过 {mb} MB。请选择小一些的照片。',
    'error.unauthorized': '你已退出登录。请重新登录。',
    'error.ratelimited': '照片太多了。请 {seconds} 秒后再试。',
    'error.server': '服务器出错了。请稍后再试。',
    'error.unreadable': '无法读取这张照片。请换一张。',
  },
};

export const languages = { en: 'English', zh: '中文' };

let current = 'en';

export function setLanguage(lang) {
  current = strings[lang] ? lang : 'en';
  document.documentElement.lang = current === 'zh' ? 'zh-Hans' : 'en';
  for (const el of document.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
}

export function language() { return current; }

export function t(key, values = {}) {
  const text = strings[current][key] ?? strings.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ''));
}
