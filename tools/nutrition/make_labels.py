"""Writes nutrition-db/labels.json from the hand-made table below (run once; the JSON is committed).

Run: python3 tools/nutrition/make_labels.py > nutrition-db/labels.json
Each row: label, food id, English name, Chinese name, emoji, colour, default portion (grams, text),
English aliases, Chinese aliases. Food ids were chosen with tools/nutrition/label_choices.py. The default portion is a
household measure of the food in the portion tables, or a multiple of one ("6 items", "0.5 cup") where one is not a serving.
Where USDA has no such dish the closest item by ingredients and cooking is used; a comment above the row says which.
PARENTS gives a dish its generic kind, written as "parent" (every parent is itself a label).
"""
import json

ROWS = [
 ("apple", "sr:171688", "Apple", "苹果", "🍎", "#D62828", 182, "1 medium (3\" dia)", ["apples"], ["苹果", "红苹果"]),
 ("apple_pie", "fndds:53301000", "Apple pie", "苹果派", "🥧", "#C98B3C", 150, "1 regular slice", [], ["苹果馅饼"]),
 ("asparagus", "sr:168389", "Asparagus", "芦笋", "🥬", "#6A994E", 134, "1 cup", [], ["石刁柏"]),
 ("avocado", "sr:171705", "Avocado", "牛油果", "🥑", "#568203", 201, "1 avocado", ["avocados"], ["鳄梨", "油梨"]),
 ("baby_back_ribs", "fndds:22701000", "Baby back ribs", "烤猪肋排", "🍖", "#8B3A1A", 105, "3 ribs (bone removed)", ["ribs", "pork ribs", "bbq ribs"], ["猪肋排", "排骨", "肋排"]),
 ("baklava", "fndds:53441110", "Baklava", "果仁蜜饼", "🥮", "#D4A017", 80, "1 piece", [], ["巴克拉瓦"]),
 ("banana", "sr:173944", "Banana", "香蕉", "🍌", "#F4D35E", 118, "1 medium (7\" to 7-7/8\" long)", ["bananas"], ["香蕉", "芭蕉"]),
 ("beef_carpaccio", "sr:169542", "Beef carpaccio", "生牛肉薄片", "🥩", "#B5252A", 85, "3 oz", ["carpaccio"], ["意式生牛肉片"]),
 ("beef_tartare", "fndds:27116400", "Beef tartare", "鞑靼牛肉", "🥩", "#9E2A2B", 169, "1 serving (FNDDS default)", ["steak tartare", "tartare"], ["生拌牛肉"]),
 ("beet", "sr:169145", "Beet", "甜菜根", "🟣", "#7B1E3A", 82, "1 beet (2\" dia)", ["beets", "beetroot"], ["甜菜", "红菜头"]),
 ("beet_salad", "fndds:75208011", "Beet salad", "甜菜沙拉", "🥗", "#A4243B", 170, "1 cup", [], ["甜菜根沙拉"]),
 ("beignets", "fndds:53520510", "Beignets", "法式甜甜圈", "🍩", "#E9C46A", 135, "3 beignets", ["beignet"], ["贝奈特饼"]),
 ("bell_pepper", "sr:170108", "Bell pepper", "甜椒", "🫑", "#E63946", 119, "1 medium", ["sweet pepper", "capsicum", "peppers"], ["彩椒", "灯笼椒", "青椒"]),
 ("bibimbap", "fndds:58150100", "Bibimbap", "石锅拌饭", "🍲", "#E76F51", 324, "2 cups", [], ["拌饭", "韩式拌饭"]),
 ("bread", "fndds:51101000", "Bread", "面包", "🍞", "#DDA15E", 28, "1 medium or regular slice", ["white bread", "toast"], ["白面包", "吐司"]),
 ("bread_pudding", "fndds:13210110", "Bread pudding", "面包布丁", "🍮", "#C68B59", 200, "1 cup", [], []),
 ("breakfast_burrito", "fndds:34003120", "Breakfast burrito", "早餐卷饼", "🌯", "#E9A03B", 190, "1 item, any size", ["egg burrito"], ["墨西哥卷饼"]),
 ("bruschetta", "fndds:51136000", "Bruschetta", "意式烤面包", "🥖", "#C1502E", 86, "2 slices", [], ["布鲁斯凯塔", "意式烤面包片"]),
 ("bun", "fndds:58123120", "Steamed bun", "包子", "🥟", "#F1E3C8", 100, "1 item, any size", ["bao", "baozi", "steamed bun", "mantou"], ["馒头", "小笼包", "菜包"]),
 ("cabbage", "sr:169975", "Cabbage", "卷心菜", "🥬", "#90BE6D", 70, "1 cup, shredded", [], ["包菜", "圆白菜", "洋白菜", "甘蓝"]),
 # FNDDS codes salad dressing separately: romaine, parmesan and croutons only, so the dressing is not counted.
 ("caesar_salad", "fndds:72116150", "Caesar salad", "凯撒沙拉", "🥗", "#8AB17D", 158, "2 cups", ["caesar"], ["凯撒色拉"]),
 ("cannoli", "fndds:53452200", "Cannoli", "西西里奶酪卷", "🥐", "#E8C07D", 85, "1 pastry", ["cannolo"], ["卡诺里", "意式奶酪卷"]),
 ("caprese_salad", "fndds:14670000", "Caprese salad", "卡布里沙拉", "🌿", "#D64933", 160, "1 cup", ["caprese", "tomato mozzarella salad"], ["卡普雷塞沙拉", "番茄马苏里拉沙拉"]),
 ("carrot", "sr:170393", "Carrot", "胡萝卜", "🥕", "#F77F00", 61, "1 medium", ["carrots"], ["红萝卜"]),
 ("carrot_cake", "fndds:53104260", "Carrot cake", "胡萝卜蛋糕", "🥕", "#D9822B", 200, "1 piece/slice, any size", [], []),
 ("ceviche", "fndds:27151030", "Ceviche", "酸橘汁腌鱼", "🐠", "#F2A65A", 250, "1 cup", ["cebiche", "seviche"], ["柠檬腌鱼", "秘鲁腌鱼"]),
 # Approximation: the cheeses only ("Cheese, NFS"); crackers and fruit on the plate are not counted.
 ("cheese_plate", "fndds:14010000", "Cheese plate", "奶酪拼盘", "🧀", "#F4C430", 63, "3 slices", ["cheese platter", "cheese board"], ["芝士拼盘"]),
 ("cheesecake", "fndds:53104500", "Cheesecake", "芝士蛋糕", "🍰", "#F3E0B5", 175, "1 piece/slice, any size", [], ["奶酪蛋糕", "乳酪蛋糕", "起司蛋糕"]),
 ("chicken_curry", "fndds:27146150", "Chicken curry", "咖喱鸡", "🍛", "#E9B44C", 240, "1 cup", [], ["咖喱鸡肉", "鸡肉咖喱"]),
 ("chicken_quesadilla", "fndds:58104740", "Chicken quesadilla", "鸡肉墨西哥烤饼", "🥙", "#E3A857", 140, "1 full circle", ["quesadilla"], ["鸡肉卡萨迪亚", "墨西哥烤饼"]),
 ("chicken_wings", "fndds:24168000", "Chicken wings", "鸡翅", "🍗", "#C1440E", 140, "4 drummettes", ["wings", "buffalo wings"], ["炸鸡翅", "烤鸡翅"]),
 ("chocolate_cake", "fndds:53105270", "Chocolate cake", "巧克力蛋糕", "🍫", "#5C3317", 175, "1 regular or small piece/slice, 2+ layer cake", [], []),
 ("chocolate_mousse", "fndds:13250000", "Chocolate mousse", "巧克力慕斯", "🟤", "#6F4E37", 85, "0.5 cup", ["mousse"], ["慕斯"]),
 ("churros", "fndds:53520200", "Churros", "吉事果", "🥨", "#C68642", 90, "2 regular", ["churro"], ["西班牙油条", "吉拿棒"]),
 ("clam_chowder", "fndds:28355110", "Clam chowder", "蛤蜊浓汤", "🥣", "#EDE3C9", 255, "1 cup", ["new england clam chowder", "chowder"], ["周打蛤蜊汤", "蛤蜊巧达汤"]),
 ("club_sandwich", "fndds:27540123", "Club sandwich", "总汇三明治", "🥪", "#D9A05B", 130, "1 sandwich, any size", ["clubhouse sandwich"], ["俱乐部三明治", "公司三明治"]),
 # SR Legacy: FNDDS has crab cakes only as a sandwich.
 ("crab_cakes", "sr:171967", "Crab cakes", "蟹饼", "🦀", "#E07A3F", 120, "2 cakes", [], ["蟹肉饼"]),
 ("creme_brulee", "fndds:13210370", "Crème brûlée", "焦糖布蕾", "🍮", "#E9B872", 130, "0.5 cup", ["burnt cream"], ["法式焦糖炖蛋", "烤布蕾"]),
 # Approximation: egg sandwich on white bread with meat (ham) and cheese; the bechamel is not in it.
 ("croque_madame", "fndds:34001130", "Croque madame", "库克太太三明治", "🍞", "#D4A24C", 180, "1 regular", [], ["法式火腿蛋三明治", "克罗克太太"]),
 ("cucumber", "sr:168409", "Cucumber", "黄瓜", "🥒", "#2A9D8F", 52, "0.5 cup slices", ["cucumbers"], ["青瓜"]),
 ("cup_cakes", "fndds:53100100", "Cupcakes", "纸杯蛋糕", "🧁", "#F7A1C4", 90, "1 cupcake, any size", [], ["杯子蛋糕"]),
 ("deviled_eggs", "fndds:32102000", "Deviled eggs", "魔鬼蛋", "🥚", "#F6D55C", 60, "2 eggs", ["devilled eggs", "stuffed eggs"], ["恶魔蛋", "酿鸡蛋"]),
 ("doughnut", "fndds:53520000", "Doughnut", "甜甜圈", "🍩", "#F28482", 75, "1 doughnut", ["donut", "donuts", "doughnuts"], ["多拿滋", "炸面圈"]),
 # Jiaozi: FNDDS "Wonton, dumpling or pot sticker, steamed" (boiled and steamed dumplings alike); pan-fried ones are gyoza.
 ("dumplings", "fndds:58112510", "Dumplings", "饺子", "🥟", "#F2E8CF", 150, "6 items", ["jiaozi", "chinese dumplings", "boiled dumplings", "shui jiao"], ["水饺", "蒸饺"]),
 ("edamame", "fndds:41420020", "Edamame", "毛豆", "🫛", "#7FB800", 160, "1 cup", ["green soybeans"], ["枝豆", "盐水毛豆"]),
 ("egg", "sr:173424", "Egg", "鸡蛋", "🥚", "#F6E7C1", 50, "1 large", ["eggs", "boiled egg", "hard boiled egg"], ["水煮蛋", "煮鸡蛋", "蛋"]),
 ("eggplant", "sr:169228", "Eggplant", "茄子", "🍆", "#5E2B97", 82, "1 cup, cubes", ["aubergine"], ["矮瓜"]),
 ("eggs_benedict", "fndds:32101500", "Eggs Benedict", "班尼迪克蛋", "🍳", "#F4B942", 310, "2 eggs", [], ["本尼迪克蛋", "班尼迪克蛋松饼"]),
 ("escargots", "fndds:26321110", "Escargots", "法式焗蜗牛", "🐌", "#6B8E23", 30, "6 snails", ["escargot", "snails"], ["焗蜗牛", "蜗牛"]),
 ("falafel", "fndds:41209000", "Falafel", "炸鹰嘴豆丸子", "🧆", "#A0522D", 68, "4 patties", ["felafel"], ["法拉费", "鹰嘴豆丸子"]),
 ("filet_mignon", "fndds:21103180", "Filet mignon", "菲力牛排", "🥩", "#8B1E3F", 160, "1 regular", ["tenderloin steak"], ["菲力", "牛里脊牛排"]),
 # Approximation: the fried cod only (no fish-and-chips plate in FNDDS or SR); the chips are french_fries.
 ("fish_and_chips", "fndds:26109140", "Fish and chips", "炸鱼薯条", "🐟", "#D8A94F", 210, "1 large fillet", ["fish n chips", "fish & chips"], ["英式炸鱼薯条"]),
 # Approximation: canned smoked pate de foie gras (SR Legacy); there is no seared foie gras in SR or FNDDS.
 ("foie_gras", "sr:171100", "Foie gras", "鹅肝", "🪿", "#C9A66B", 56.7, "2 oz", [], ["法式鹅肝"]),
 ("french_fries", "fndds:71401031", "French fries", "薯条", "🍟", "#F2C14E", 145, "1 medium fast food order", ["fries", "french fry", "pommes frites"], ["炸薯条"]),
 ("french_onion_soup", "fndds:75608100", "French onion soup", "法式洋葱汤", "🧅", "#B5651D", 245, "1 cup", ["onion soup"], ["洋葱汤"]),
 ("french_toast", "fndds:55300010", "French toast", "法式吐司", "🍞", "#E1AD01", 130, "2 slices, any size", ["eggy bread"], ["西多士", "法国吐司"]),
 ("fried_calamari", "fndds:26213140", "Fried calamari", "炸鱿鱼圈", "🦑", "#E6B655", 135, "1 cup", ["calamari", "fried squid"], ["炸鱿鱼", "鱿鱼圈"]),
 ("fried_dough_twist", "fndds:53452170", "Fried dough twist", "麻花", "🥨", "#C8963E", 46, "1 pastry", ["mahua", "dough twist"], ["小麻花", "油炸麻花"]),
 ("fried_rice", "fndds:58150310", "Fried rice", "炒饭", "🍚", "#E9C46A", 198, "1 cup", [], ["蛋炒饭", "扬州炒饭"]),
 ("frozen_yogurt", "fndds:11460000", "Frozen yogurt", "冻酸奶", "🍦", "#F8E1E7", 160, "1 small ice cream cup", ["froyo"], ["酸奶冰淇淋"]),
 ("garlic", "sr:169230", "Garlic", "大蒜", "🧄", "#EDE6D6", 3, "1 clove", [], ["蒜", "蒜头"]),
 ("garlic_bread", "fndds:51121015", "Garlic bread", "蒜蓉面包", "🧄", "#E9C46A", 79, "1 medium slice", ["garlic toast"], ["大蒜面包", "蒜香面包"]),
 ("ginger", "sr:169231", "Ginger", "生姜", "🫚", "#D4A373", 11, "5 slices (1\" dia)", ["ginger root"], ["姜", "老姜"]),
 ("gnocchi", "fndds:58122220", "Gnocchi", "意式土豆团子", "🥔", "#EAD7A1", 188, "1 cup", ["potato gnocchi"], ["意大利面疙瘩", "土豆团子"]),
 ("grape", "sr:174683", "Grapes", "葡萄", "🍇", "#6A4C93", 151, "1 cup", ["grape"], ["提子"]),
 ("grapefruit", "sr:173033", "Grapefruit", "西柚", "🍊", "#F08080", 128, "0.5 medium (approx 4\" dia)", [], ["葡萄柚"]),
 # FNDDS codes salad dressing separately: the vegetables, feta and olives only.
 ("greek_salad", "fndds:75146000", "Greek salad", "希腊沙拉", "🫒", "#6A8D3A", 210, "2 cups", ["horiatiki"], ["希腊色拉"]),
 ("grilled_cheese_sandwich", "fndds:14640100", "Grilled cheese sandwich", "烤奶酪三明治", "🧀", "#F1B42F", 116, "1 sandwich", ["grilled cheese", "cheese toastie"], ["芝士三明治", "烤芝士三明治"]),
 ("grilled_salmon", "fndds:26137123", "Grilled salmon", "烤三文鱼", "🐟", "#FA8072", 140, "1 small/regular fillet", ["salmon"], ["三文鱼", "烤鲑鱼", "鲑鱼"]),
 ("guacamole", "fndds:63409010", "Guacamole", "牛油果酱", "🥑", "#7BA05B", 70, "1 individual container", ["guac", "avocado dip"], ["鳄梨酱", "墨西哥牛油果酱"]),
 ("gyoza", "fndds:58111110", "Gyoza", "煎饺", "🥟", "#D9B26F", 150, "6 items", ["potstickers", "pot stickers", "fried dumplings", "pan-fried dumplings"], ["锅贴", "日式煎饺"]),
 ("hamburger", "fndds:27510521", "Hamburger", "汉堡包", "🍔", "#B5651D", 145, "1 hamburger", ["burger"], ["汉堡"]),
 ("hot_and_sour_soup", "fndds:28340750", "Hot and sour soup", "酸辣汤", "🍲", "#A0522D", 245, "1 cup", [], []),
 ("hot_dog", "fndds:27564000", "Hot dog", "热狗", "🌭", "#C0392B", 102, "1 sandwich", ["hotdog"], ["热狗面包"]),
 ("huevos_rancheros", "fndds:32105180", "Huevos rancheros", "墨西哥乡村煎蛋", "🍳", "#E4572E", 236, "2 eggs", [], ["牧场煎蛋", "墨西哥早餐蛋"]),
 ("hummus", "fndds:41205070", "Hummus", "鹰嘴豆泥", "🫘", "#D9B98B", 70, "1 individual container", ["houmous", "hommus"], ["鹰嘴豆酱"]),
 ("ice_cream", "sr:167575", "Ice cream", "冰淇淋", "🍨", "#FFF1C1", 66, "1 serving 1/2 cup", ["vanilla ice cream"], ["雪糕", "冰激凌"]),
 ("kiwi", "sr:168153", "Kiwi", "猕猴桃", "🥝", "#7CB518", 69, "1 fruit (2\" dia)", ["kiwifruit", "kiwi fruit"], ["奇异果"]),
 ("lasagna", "fndds:58130011", "Lasagna", "千层面", "🍝", "#C44536", 206, "1 piece (1/6 of 8\" square, approx 2-1/2\" x 4\")", ["lasagne"], ["意式千层面"]),
 ("leek", "sr:169246", "Leek", "韭葱", "🥬", "#80B918", 89, "1 leek", ["leeks"], ["大葱", "葱"]),
 ("lemon", "sr:167746", "Lemon", "柠檬", "🍋", "#FFE45E", 58, "1 fruit (2-1/8\" dia)", ["lemons"], []),
 ("lime", "sr:168155", "Lime", "青柠", "🍋", "#A7C957", 67, "1 fruit (2\" dia)", ["limes"], ["青柠檬"]),
 ("litchi", "sr:169086", "Lychee", "荔枝", "🍒", "#D1495B", 96, "10 fruits", ["lychee", "lichee", "litchis"], []),
 ("lobster_bisque", "fndds:28355250", "Lobster bisque", "龙虾浓汤", "🦞", "#E76F51", 255, "1 cup", ["bisque"], ["龙虾汤"]),
 # FNDDS "Seafood salad sandwich" (crab, shrimp or lobster salad): a lobster roll is a lobster salad sandwich.
 ("lobster_roll_sandwich", "fndds:27550800", "Lobster roll", "龙虾卷", "🦞", "#F08A5D", 180, "1 regular sandwich", ["lobster sandwich"], ["龙虾三明治", "龙虾堡"]),
 ("macaroni_and_cheese", "fndds:58145110", "Macaroni and cheese", "芝士通心粉", "🧀", "#F6C744", 230, "1 cup", ["mac and cheese", "mac n cheese", "mac & cheese"], ["奶酪通心粉", "起司通心粉"]),
 # Approximation: the coconut-meringue macaroon cookie; there is no almond macaron in FNDDS or SR.
 ("macarons", "fndds:53225000", "Macarons", "马卡龙", "🍪", "#F4A7B9", 72, "3 cookies", ["french macarons"], ["法式小圆饼"]),
 ("mandarin", "sr:169105", "Mandarin orange", "橘子", "🍊", "#F8961E", 88, "1 medium (2-1/2\" dia)", ["tangerine", "mandarin", "clementine"], ["桔子", "柑橘", "蜜橘"]),
 ("mango", "sr:169910", "Mango", "芒果", "🥭", "#FFB703", 165, "1 cup pieces", ["mangoes", "mangos"], []),
 ("melon", "sr:169092", "Melon (cantaloupe)", "哈密瓜", "🍈", "#F4A261", 160, "1 cup, cubes", ["cantaloupe", "muskmelon"], ["甜瓜", "香瓜", "蜜瓜"]),
 ("miso_soup", "fndds:41601070", "Miso soup", "味噌汤", "🍵", "#C9A66B", 245, "1 cup", [], ["日式味噌汤", "面豉汤"]),
 ("mooncake", "fndds:53452130", "Mooncake", "月饼", "🥮", "#B08968", 138, "1 large round Moon Cake", ["moon cake"], ["广式月饼", "蛋黄月饼"]),
 ("mushroom", "sr:169251", "Mushroom", "蘑菇", "🍄", "#A98467", 70, "1 cup, pieces or slices", ["mushrooms", "button mushroom"], ["口蘑", "白蘑菇", "香菇"]),
 ("mussels", "fndds:26313110", "Mussels", "贻贝", "🦪", "#2F4858", 135, "1 cup", ["moules", "moules marinieres"], ["青口", "淡菜", "海虹"]),
 ("nachos", "fndds:58104105", "Nachos", "墨西哥玉米片", "🌽", "#F5B700", 250, "1 order", [], ["芝士玉米片", "玉米片拼盘"]),
 ("nectarine", "sr:169914", "Nectarine", "油桃", "🍑", "#F28F3B", 142, "1 medium (2-1/2\" dia)", ["nectarines"], []),
 ("omelette", "fndds:32129990", "Omelette", "欧姆蛋", "🍳", "#FFD166", 110, "2 eggs", ["omelet"], ["煎蛋卷", "奄列"]),
 ("onion", "sr:170000", "Onion", "洋葱", "🧅", "#C9A227", 110, "1 medium (2-1/2\" dia)", ["onions"], ["圆葱"]),
 ("onion_rings", "fndds:75415022", "Onion rings", "洋葱圈", "🧅", "#D4A017", 120, "1 fast food order", [], ["炸洋葱圈"]),
 ("orange", "sr:169097", "Orange", "橙子", "🍊", "#FB8500", 131, "1 fruit (2-5/8\" dia)", ["oranges"], ["橙", "甜橙", "脐橙"]),
 ("oysters", "fndds:26315100", "Oysters", "生蚝", "🦪", "#B8C5C9", 90, "6 oysters", ["raw oysters"], ["牡蛎"]),
 ("pad_thai", "fndds:58137210", "Pad thai", "泰式炒河粉", "🍜", "#E9A03B", 400, "2 cups", ["phad thai"], ["泰式炒粉", "帕泰"]),
 ("paella", "fndds:27360090", "Paella", "西班牙海鲜饭", "🥘", "#F4A300", 240, "1 cup", [], ["海鲜饭", "西班牙炖饭"]),
 ("pancakes", "fndds:55100005", "Pancakes", "美式松饼", "🥞", "#E3B778", 150, "3 medium pancakes", ["hotcakes", "flapjacks"], ["薄煎饼", "热香饼", "班戟"]),
 # Approximation: flan, the closest chilled, molded custard dessert in FNDDS (no panna cotta; flan is set with eggs, not gelatin and cream).
 ("panna_cotta", "fndds:13210350", "Panna cotta", "意式奶冻", "🥛", "#F5EBDC", 130, "0.5 cup", [], ["意式奶酪", "帕纳科塔"]),
 ("papaya", "sr:169926", "Papaya", "木瓜", "🥭", "#F4845F", 145, "1 cup 1\" pieces", ["papayas"], ["番木瓜"]),
 ("passion_fruit", "sr:169108", "Passion fruit", "百香果", "🟣", "#7B2CBF", 18, "1 fruit without refuse", ["granadilla", "passionfruit"], ["西番莲"]),
 ("peach", "sr:169928", "Peach", "桃子", "🍑", "#FFAD8F", 150, "1 medium (2-2/3\" dia)", ["peaches"], ["桃", "水蜜桃"]),
 ("pear", "sr:169118", "Pear", "梨", "🍐", "#C5D86D", 178, "1 medium", ["pears"], ["梨子", "雪梨", "鸭梨"]),
 ("peking_duck", "fndds:24302010", "Peking duck", "北京烤鸭", "🦆", "#A23B1B", 140, "1 cup, diced, cooked", ["beijing duck", "beijing roast duck"], ["烤鸭"]),
 ("pho", "fndds:28310330", "Pho", "越南河粉", "🍜", "#D9A441", 490, "2 cups", ["pho bo", "vietnamese noodle soup"], ["越南粉", "牛肉河粉"]),
 ("pineapple", "sr:169124", "Pineapple", "菠萝", "🍍", "#FFC300", 165, "1 cup, chunks", [], ["凤梨"]),
 ("pizza", "fndds:58106210", "Pizza", "披萨", "🍕", "#E85D04", 119, "1 piece, NFS", ["cheese pizza"], ["比萨", "匹萨", "比萨饼"]),
 ("plum", "sr:169949", "Plum", "李子", "🫐", "#6D213C", 66, "1 fruit (2-1/8\" dia)", ["plums"], ["李"]),
 ("pomegranate", "sr:169134", "Pomegranate", "石榴", "🔴", "#B5179E", 87, "0.5 cup arils (seed/juice sacs)", ["pomegranates"], ["红石榴"]),
 ("pork_chop", "fndds:22101000", "Pork chop", "猪排", "🐖", "#C97C5D", 120, "1 regular", [], ["猪扒", "煎猪排"]),
 ("potato", "sr:170026", "Potato", "土豆", "🥔", "#C2A878", 213, "1 Potato medium (2-1/4\" to 3-1/4\" dia)", ["potatoes"], ["马铃薯", "洋芋"]),
 # Approximation: french fries with cheese (restaurant); the gravy is not in it.
 ("poutine", "fndds:71401039", "Poutine", "肉汁奶酪薯条", "🍟", "#B5835A", 222, "1 medium fast food order", [], ["加拿大薯条", "普丁"]),
 ("prime_rib", "fndds:21101170", "Prime rib", "烤牛肋排", "🍖", "#8E3B46", 240, "1 regular", ["standing rib roast", "rib roast"], ["肋眼牛排", "牛肋眼"]),
 ("pulled_pork_sandwich", "fndds:27520510", "Pulled pork sandwich", "手撕猪肉三明治", "🍔", "#A0522D", 180, "1 regular sandwich", ["bbq pork sandwich"], ["手撕猪肉汉堡", "手撕猪肉堡"]),
 ("ramen", "fndds:58407034", "Ramen", "拉面", "🍜", "#F3722C", 490, "2 cups", ["ramen noodles", "noodle soup"], ["日式拉面", "汤面", "面条"]),
 ("ravioli", "fndds:58131110", "Ravioli", "意式饺子", "🍝", "#D1603D", 250, "1 cup", [], ["意大利饺子", "意大利方饺"]),
 ("red_velvet_cake", "fndds:53116520", "Red velvet cake", "红丝绒蛋糕", "🟥", "#A4161A", 200, "1 piece/slice, any size", ["red velvet"], []),
 ("risotto", "fndds:58164520", "Risotto", "意大利烩饭", "🍚", "#E6D3A3", 204, "1 cup", [], ["意式炖饭", "烩饭"]),
 ("sachima", "fndds:53452170", "Sachima", "沙琪玛", "🍯", "#DDA15E", 46, "1 pastry", ["shaqima", "saqima"], ["萨其马", "沙其马"]),
 ("samosa", "fndds:58124500", "Samosa", "萨莫萨", "🥟", "#D68C45", 100, "1 regular/large", [], ["咖喱角", "印度咖喱角"]),
 # Raw salmon, which FNDDS gives as its sashimi.
 ("sashimi", "fndds:26137100", "Sashimi", "生鱼片", "🍣", "#FA8072", 135, "1 cup", ["salmon sashimi"], ["刺身", "三文鱼刺身"]),
 ("scallops", "fndds:26317120", "Scallops", "扇贝", "🐚", "#F0D9B5", 90, "6 scallops", ["seared scallops"], ["带子", "香煎扇贝"]),
 # Approximation: pickled seaweed (vinegar and sugar); the sesame oil of a wakame salad is not in it.
 ("seaweed_salad", "fndds:75513010", "Seaweed salad", "海藻沙拉", "🥬", "#2E8B57", 100, "1 cup", ["wakame salad"], ["海草沙拉", "中华海草", "凉拌裙带菜"]),
 # Approximation: cheese grits made with fat; the shrimp are not in it.
 ("shrimp_and_grits", "fndds:56201092", "Shrimp and grits", "鲜虾玉米粥", "🦐", "#E9C46A", 240, "1 cup, cooked", [], ["虾仁玉米粥"]),
 ("spaghetti_bolognese", "fndds:58146321", "Spaghetti bolognese", "肉酱意面", "🍝", "#B23A48", 250, "1 cup", ["spaghetti with meat sauce", "spag bol", "bolognese"], ["博洛尼亚肉酱面", "意大利肉酱面"]),
 # Approximation: pasta with cream sauce and meat (restaurant); carbonara's sauce is egg and cheese.
 ("spaghetti_carbonara", "fndds:58146401", "Spaghetti carbonara", "培根蛋酱意面", "🍝", "#F1D38A", 250, "1 cup", ["carbonara"], ["卡邦尼意面", "奶油培根意面"]),
 ("spring_rolls", "fndds:58110130", "Spring rolls", "春卷", "🌯", "#E0A458", 128, "2 egg rolls", ["egg roll"], ["炸春卷"]),
 ("steak", "fndds:21101000", "Steak", "牛排", "🥩", "#9D0208", 160, "1 regular", ["beef steak"], ["煎牛排", "西冷牛排"]),
 ("strawberry_shortcake", "fndds:53123070", "Strawberry shortcake", "草莓奶油蛋糕", "🍓", "#E63946", 175, "1 piece/slice, any size", ["shortcake"], ["草莓蛋糕", "草莓酥饼"]),
 ("sushi", "fndds:58151100", "Sushi", "寿司", "🍣", "#F94144", 180, "6 pieces", ["maki", "nigiri"], ["寿司卷"]),
 ("sweet_potato", "sr:168482", "Sweet potato", "红薯", "🍠", "#D35400", 130, "1 sweetpotato, 5\" long", ["sweet potatoes", "yam"], ["地瓜", "番薯", "红苕"]),
 ("tacos", "fndds:58102000", "Tacos", "墨西哥塔可", "🌮", "#E9A23B", 210, "2 small/regular tacos", [], ["塔可", "墨西哥夹饼", "塔克"]),
 # Approximation: codfish fritter (Bacalaitos fritos), a batter fritter with fish; no takoyaki or octopus fritter in FNDDS.
 ("takoyaki", "fndds:58117410", "Takoyaki", "章鱼小丸子", "🐙", "#C8553D", 140, "4 fritters", ["octopus balls"], ["章鱼烧"]),
 ("tiramisu", "fndds:13252600", "Tiramisu", "提拉米苏", "☕", "#8B5E3C", 175, "1 piece", [], []),
 ("tomato", "sr:170457", "Tomato", "番茄", "🍅", "#EF233C", 123, "1 medium whole (2-3/5\" dia)", ["tomatoes"], ["西红柿"]),
 # Approximation: raw ahi tuna; the oil, sesame or avocado of a tartare are not in it.
 ("tuna_tartare", "fndds:26153100", "Tuna tartare", "金枪鱼塔塔", "🐟", "#C0392B", 135, "1 cup", ["ahi tartare", "tuna tartar"], ["鞑靼金枪鱼", "生拌金枪鱼"]),
 ("waffles", "fndds:55200010", "Waffles", "华夫饼", "🧇", "#DDA15E", 135, "1 thick / Belgian waffle", ["belgian waffle"], ["格子饼", "窝夫"]),
 ("watermelon", "sr:167765", "Watermelon", "西瓜", "🍉", "#EF476F", 152, "1 cup, diced", [], []),
 ("zucchini", "sr:169291", "Zucchini", "西葫芦", "🥒", "#4F772D", 196, "1 medium", ["courgette", "summer squash"], ["角瓜", "美洲南瓜"]),
 # SOHL classes (Indian meal components)
 ("dal_or_sambar", "fndds:41305050", "Dal or sambar", "豆糊汤", "🍲", "#E9C46A", 240, "1 cup", ["dal", "daal", "dhal", "sambar", "lentil curry"], ["印度豆汤", "扁豆汤", "木豆糊"]),
 ("accompaniment", "fndds:63409020", "Accompaniment (chutney, pickle)", "佐餐小菜", "🫙", "#6A994E", 32, "2 tablespoons", ["chutney", "pickle", "raita", "papad"], ["酸辣酱", "印度泡菜", "小菜"]),
 ("bread_or_roti_naan", "fndds:51108100", "Roti or naan", "印度烤饼", "🫓", "#E0B872", 44, "1 piece (1/4 of 10\" dia)", ["naan", "roti", "chapati", "paratha", "flatbread"], ["馕", "飞饼", "薄饼"]),
 ("curry_dish", "fndds:75440600", "Curry", "咖喱", "🍛", "#F4A259", 240, "1 cup", ["curry", "vegetable curry", "paneer curry"], ["咖喱菜", "蔬菜咖喱"]),
 ("drink", "fndds:92302000", "Drink (tea)", "饮品", "🍵", "#8D6E63", 240, "1 cup", ["tea", "chai", "beverage"], ["茶", "饮料", "红茶"]),
 ("dry_vegetable", "fndds:75340020", "Dry vegetable (sabzi)", "炒蔬菜", "🥦", "#55A630", 132, "1 cup", ["sabzi", "stir fry vegetables", "bhaji"], ["清炒时蔬", "炒青菜", "干炒蔬菜"]),
 ("eggs", "fndds:32129990", "Eggs", "炒蛋", "🍳", "#FFD166", 110, "2 eggs", ["omelet", "omelette", "scrambled eggs", "egg bhurji"], ["煎蛋", "炒鸡蛋", "煎蛋卷"]),
 ("fish_dish", "fndds:27150320", "Fish curry", "咖喱鱼", "🐟", "#4D908E", 240, "1 cup", ["fish curry", "fish fry"], ["鱼", "鱼料理", "煮鱼"]),
 ("fruits", "fndds:63311000", "Fruits", "水果", "🍇", "#F15BB5", 150, "1 cup", ["fruit", "fruit salad", "fruit plate"], ["水果拼盘", "水果沙拉"]),
 ("pasta", "fndds:58146150", "Pasta", "意大利面", "🍝", "#F9C74F", 250, "1 cup", ["spaghetti", "penne", "macaroni"], ["意面", "通心粉"]),
 ("rice_dish", "fndds:56205001", "Rice", "米饭", "🍚", "#F8F4E3", 163, "1 cup, cooked", ["rice", "steamed rice", "white rice", "biryani", "pulao"], ["白米饭", "白饭", "大米饭"]),
 ("salad", "fndds:75142600", "Salad", "沙拉", "🥗", "#80B918", 80, "0.5 cup", ["green salad", "cucumber salad", "kachumber"], ["色拉", "蔬菜沙拉", "凉拌黄瓜"]),
 ("snack_item", "fndds:58124500", "Snack (samosa)", "小吃", "🥟", "#E76F51", 100, "1 regular/large", ["samosa", "pakora", "snack"], ["咖喱角", "零食", "炸角"]),
 ("soup", "fndds:75649110", "Soup", "汤", "🥣", "#F4A261", 245, "1 cup", ["vegetable soup"], ["蔬菜汤", "清汤"]),
 ("south_indian_breakfast", "fndds:55702100", "South Indian breakfast (dosa)", "印度薄饼早餐", "🫓", "#E9C46A", 80, "1 medium", ["dosa", "idli", "uttapam", "vada", "upma"], ["多萨饼", "印度米浆饼"]),
 ("sweet_item", "fndds:13252500", "Indian sweet (barfi)", "甜点", "🍬", "#FF70A6", 45, "1 piece", ["sweet", "dessert", "mithai", "barfi", "ladoo", "gulab jamun"], ["印度甜点", "甜食"]),
 # ChineseFoodNet dishes (USDA has few Chinese dishes: the closest FNDDS item by ingredients and cooking).
 # Approximation: fish and vegetables in a soy-based sauce; the chili oil of shui zhu yu is not in it.
 ("boiled_fish_in_chili_oil", "fndds:27450750", "Sichuan boiled fish", "水煮鱼", "🐟", "#D62828", 217, "1 cup", ["shui zhu yu", "fish in hot chili oil"], ["水煮鱼片"]),
 # Approximation: home fries with peppers and onions (Potatoes O'Brien): fried potato and pepper, without the eggplant.
 ("di_san_xian", "fndds:71403500", "Di san xian", "地三鲜", "🫑", "#8C6D2C", 200, "1 cup", ["potato eggplant and pepper stir-fry", "three earthly treasures"], []),
 # Approximation: home-fried potatoes from fresh (pan-fried in oil); the vinegar and chili add next to nothing.
 ("hot_sour_shredded_potato", "fndds:71403040", "Hot and sour shredded potato", "酸辣土豆丝", "🥔", "#E9C46A", 200, "1 cup", ["suan la tu dou si", "shredded potato stir-fry"], ["土豆丝", "炒土豆丝", "醋溜土豆丝"]),
 ("kung_pao_chicken", "fndds:27445220", "Kung pao chicken", "宫保鸡丁", "🥜", "#C1440E", 162, "1 cup", ["kung po chicken", "gong bao chicken"], ["宫爆鸡丁"]),
 # Approximation: lettuce, cooked (with or without fat); the oyster sauce is not in it.
 ("lettuce_oyster_sauce", "fndds:75220051", "Lettuce in oyster sauce", "蚝油生菜", "🥬", "#4C9A2A", 86, "1 cup", ["lettuce with oyster sauce"], ["白灼生菜"]),
 # Approximation: pork, tofu and vegetables in a soy-based sauce (mapo tofu: tofu and minced pork in chili bean sauce).
 ("mapo_tofu", "fndds:27420370", "Mapo tofu", "麻婆豆腐", "🍲", "#C0392B", 217, "1 cup", ["mapo doufu", "ma po tofu"], []),
 # Approximation: pork belly (FNDDS); the preserved mustard greens are not in it.
 ("pork_preserved_vegetable", "fndds:22708020", "Pork belly with preserved mustard greens", "梅菜扣肉", "🍖", "#6B3E26", 135, "1 cup", ["mei cai kou rou", "braised pork with preserved vegetables"], ["扣肉", "梅干菜扣肉"]),
 # Approximation: pork belly (FNDDS); the soy sauce and sugar of the braise are not in it.
 ("red_braised_pork", "fndds:22708020", "Red-braised pork belly", "红烧肉", "🐷", "#8B2E16", 135, "1 cup", ["hong shao rou", "braised pork belly"], ["红烧五花肉"]),
 # Approximation: pork and onions with soy-based sauce ("Pork Scallion" in FNDDS): the same stir-fry with pork; FNDDS has no lamb stir-fry.
 ("scallion_lamb", "fndds:27420170", "Stir-fried lamb with scallions", "葱爆羊肉", "🐑", "#9C6644", 256, "1 cup", ["lamb with scallions", "mongolian lamb"], ["葱爆羊肉片"]),
 # Approximation: crayfish, cooked (the meat); the chili oil and sauce are not in it.
 ("spicy_crayfish", "fndds:26309160", "Spicy crayfish", "香辣小龙虾", "🦞", "#D00000", 150, "10 crayfish", ["crayfish", "crawfish", "mala crayfish"], ["麻辣小龙虾", "小龙虾", "十三香小龙虾"]),
 # Approximation: pork with soy-based sauce (lean pork, onions and scallions; the sauce here is sweet bean sauce).
 ("sweet_bean_shredded_pork", "fndds:27120150", "Shredded pork in sweet bean sauce", "京酱肉丝", "🫓", "#7A3E1D", 244, "1 cup", ["jing jiang rou si", "peking shredded pork"], []),
 # Approximation: sweet and sour pork (fried pork in sweet and sour sauce), boneless.
 ("sweet_sour_spareribs", "fndds:27120060", "Sweet and sour spareribs", "糖醋排骨", "🦴", "#C8553D", 226, "1 cup", ["sweet and sour ribs", "tang cu pai gu"], ["糖醋小排"]),
 ("tomato_egg_stir_fry", "fndds:32130400", "Tomato and egg stir-fry", "西红柿炒蛋", "🍅", "#E85D3F", 135, "1 cup", ["tomato egg", "scrambled eggs with tomato"], ["番茄炒蛋", "西红柿炒鸡蛋", "番茄炒鸡蛋"]),
 # Approximation: pork and vegetables (no carrots or greens) in a soy-based sauce; FNDDS uses lean loin, not pork belly.
 ("twice_cooked_pork", "fndds:27420510", "Twice-cooked pork", "回锅肉", "🥓", "#B5533C", 217, "1 cup", ["hui guo rou", "huiguorou"], []),
 # Approximation: fried eggplant (battered or breaded); restaurant yuxiang eggplant is fried in oil before it is sauced.
 ("yuxiang_eggplant", "fndds:75412010", "Fish-fragrant eggplant", "鱼香茄子", "🍆", "#7B2D8B", 110, "0.5 cup", ["eggplant in garlic sauce", "yu xiang eggplant"], []),
 # Approximation: pork and vegetables with carrots in a soy-based sauce (FNDDS lists Szechuan and Hunan pork under it).
 ("yuxiang_shredded_pork", "fndds:27420500", "Fish-fragrant shredded pork", "鱼香肉丝", "🥢", "#D1495B", 217, "1 cup", ["yu xiang rou si", "shredded pork with garlic sauce"], []),
 # Approximation: lo mein with pork (wheat noodles and pork in a soy-based sauce; zhajiang is fermented soybean paste).
 ("zhajiang_noodles", "fndds:58136140", "Zhajiang noodles", "炸酱面", "🍜", "#8D5524", 400, "2 cups", ["zha jiang mian", "noodles with soybean paste"], ["老北京炸酱面"]),
 # Generic parent kinds (an answer like "some noodle soup" when the dish is not known)
 ("cake", "fndds:53100100", "Cake", "蛋糕", "🎂", "#F4ACB7", 175, "1 piece/slice, any size", [], []),
 # FNDDS "Soup, noodle, NFS": half chicken noodle soup, half ramen bowl.
 ("noodle_soup", "fndds:58400100", "Noodle soup", "汤面", "🍜", "#E9B44C", 490, "2 cups", ["noodles in soup", "soup noodles"], ["汤粉", "汤米粉"]),
 ("sandwich", "fndds:27500050", "Sandwich", "三明治", "🥪", "#D9A066", 115, "1 regular", ["deli sandwich"], ["三文治"]),
 # FNDDS "Stir fried beef and vegetables in soy sauce": meat and vegetables stir-fried in soy sauce.
 ("stir_fry", "fndds:27416400", "Stir-fry", "小炒", "🥡", "#B5651D", 162, "1 cup", ["stir-fried dish", "wok dish"], ["炒菜", "家常小炒"]),
]

# Each dish label -> ONE generic label that correctly and more generally describes it (used when the exact dish is
# not known: "some noodle soup"). Generic labels, plain produce and dishes no generic label describes have none.
# The thali kinds fish_dish ("Fish curry"), sweet_item ("Indian sweet") and snack_item ("Snack (samosa)") are not
# parents: each carries one specific dish's nutrition row, so a never-taught dessert answered as barfi would be a wrong
# dish, not a right kind. Desserts, snacks and fish dishes have no parent; a parent's row is its kind's average.
PARENTS = {
 # soups
 "clam_chowder": "soup", "french_onion_soup": "soup", "hot_and_sour_soup": "soup", "lobster_bisque": "soup",
 "miso_soup": "soup",
 "pho": "noodle_soup", "ramen": "noodle_soup",
 # salads
 "beet_salad": "salad", "caesar_salad": "salad", "caprese_salad": "salad", "greek_salad": "salad",
 "seaweed_salad": "salad",
 # pasta (gnocchi are a fresh pasta in Italian cooking)
 "gnocchi": "pasta", "lasagna": "pasta", "macaroni_and_cheese": "pasta", "ravioli": "pasta",
 "spaghetti_bolognese": "pasta", "spaghetti_carbonara": "pasta",
 "chicken_curry": "curry_dish",
 "bibimbap": "rice_dish", "fried_rice": "rice_dish", "paella": "rice_dish", "risotto": "rice_dish",
 "sushi": "rice_dish",
 # stir-fries (wok-fried dishes; braised, steamed or poured-over dishes such as mapo tofu, red-braised pork or
 # lettuce in oyster sauce are not)
 "di_san_xian": "stir_fry", "hot_sour_shredded_potato": "stir_fry", "kung_pao_chicken": "stir_fry",
 "pad_thai": "stir_fry", "scallion_lamb": "stir_fry", "sweet_bean_shredded_pork": "stir_fry",
 "twice_cooked_pork": "stir_fry", "yuxiang_eggplant": "stir_fry", "yuxiang_shredded_pork": "stir_fry",
 # cakes (tiramisu is a spoon dessert, not a cake)
 "carrot_cake": "cake", "cheesecake": "cake", "chocolate_cake": "cake", "cup_cakes": "cake",
 "red_velvet_cake": "cake", "strawberry_shortcake": "cake",
 # sandwiches (USDA counts hamburgers and hot dogs as sandwiches)
 "club_sandwich": "sandwich", "croque_madame": "sandwich", "grilled_cheese_sandwich": "sandwich",
 "hamburger": "sandwich", "hot_dog": "sandwich", "lobster_roll_sandwich": "sandwich",
 "pulled_pork_sandwich": "sandwich",
 "gyoza": "dumplings",
 # breads
 "bread_or_roti_naan": "bread", "bruschetta": "bread", "garlic_bread": "bread",
 # egg dishes
 "deviled_eggs": "eggs", "eggs_benedict": "eggs", "huevos_rancheros": "eggs", "omelette": "eggs",
 "tomato_egg_stir_fry": "eggs",
}


def fmt(g):
    return str(int(g)) if float(g).is_integer() else str(g)


def main():
    labels = []
    for (label, food, name, zh, emoji, color, grams, portion, en_aliases, zh_aliases) in sorted(ROWS):
        entry = {
            "label": label, "name": name, "name_zh": zh, "emoji": emoji, "color": color, "food": food,
            "portion_grams": grams, "portion": f"{portion}, {fmt(grams)} g",
            "aliases": {"en": en_aliases, "zh": [z for z in zh_aliases if z != zh]},
        }
        if label in PARENTS:
            entry["parent"] = PARENTS[label]
        labels.append(entry)
    known = {l["label"] for l in labels}
    assert len(known) == len(labels), "a label appears twice"
    for child, parent in PARENTS.items():
        assert child in known, f"PARENTS names {child}, which is not a label"
        assert parent in known, f"{child}'s parent {parent} is not a label"
        assert parent not in PARENTS, f"{child}'s parent {parent} has a parent itself"
    print(json.dumps({"version": 1, "labels": labels}, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
