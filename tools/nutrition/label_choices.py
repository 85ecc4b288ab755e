"""Hand-picked label -> food choices; prints each food's portions so a default can be chosen.

Used once to write nutrition-db/labels.json (the JSON file is the source of truth afterwards).
Run: python3 tools/nutrition/label_choices.py ../shared/data/nutrition
"""
import csv, sys, os

D = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/nutrition"
CHOICES = {
 # label: (food id, English display name)
 "apple": ("sr:171688", "Apple"), "apple_pie": ("fndds:53301000", "Apple pie"), "asparagus": ("sr:168389", "Asparagus"),
 "avocado": ("sr:171705", "Avocado"), "baby_back_ribs": ("sr:168300", "Baby back ribs"), "baklava": ("fndds:53441110", "Baklava"),
 "banana": ("sr:173944", "Banana"), "beef_carpaccio": ("sr:169542", "Beef carpaccio"), "beef_tartare": ("fndds:27116400", "Beef tartare"),
 "beet": ("sr:169145", "Beet"), "beet_salad": ("fndds:75208011", "Beet salad"), "beignets": ("fndds:53520510", "Beignets"),
 "bell_pepper": ("sr:170108", "Bell pepper"), "bibimbap": ("fndds:58150100", "Bibimbap"), "bread": ("fndds:51101000", "Bread"),
 "bread_pudding": ("fndds:13210110", "Bread pudding"), "breakfast_burrito": ("fndds:34003120", "Breakfast burrito"),
 "bun": ("fndds:58123120", "Steamed bun"), "cabbage": ("sr:169975", "Cabbage"), "carrot": ("sr:170393", "Carrot"),
 "chicken_curry": ("fndds:27146150", "Chicken curry"), "chicken_wings": ("fndds:24168000", "Chicken wings"),
 "cucumber": ("sr:168409", "Cucumber"), "doughnut": ("fndds:53520000", "Doughnut"), "egg": ("sr:173424", "Egg"),
 "eggplant": ("sr:169228", "Eggplant"), "fried_dough_twist": ("fndds:53452170", "Fried dough twist"),
 "fried_rice": ("fndds:58150310", "Fried rice"), "garlic": ("sr:169230", "Garlic"), "ginger": ("sr:169231", "Ginger"),
 "grape": ("sr:174683", "Grapes"), "grapefruit": ("sr:173033", "Grapefruit"), "grilled_salmon": ("fndds:26137123", "Grilled salmon"),
 "hamburger": ("fndds:27510521", "Hamburger"), "ice_cream": ("sr:167575", "Ice cream"), "kiwi": ("sr:168153", "Kiwi"),
 "leek": ("sr:169246", "Leek"), "lemon": ("sr:167746", "Lemon"), "lime": ("sr:168155", "Lime"), "litchi": ("sr:169086", "Lychee"),
 "mandarin": ("sr:169105", "Mandarin orange"), "mango": ("sr:169910", "Mango"), "melon": ("sr:169092", "Melon (cantaloupe)"),
 "mooncake": ("fndds:53452130", "Mooncake"), "mushroom": ("sr:169251", "Mushroom"), "nectarine": ("sr:169914", "Nectarine"),
 "onion": ("sr:170000", "Onion"), "orange": ("sr:169097", "Orange"), "papaya": ("sr:169926", "Papaya"),
 "passion_fruit": ("sr:169108", "Passion fruit"), "peach": ("sr:169928", "Peach"), "pear": ("sr:169118", "Pear"),
 "pineapple": ("sr:169124", "Pineapple"), "pizza": ("fndds:58106210", "Pizza"), "plum": ("sr:169949", "Plum"),
 "pomegranate": ("sr:169134", "Pomegranate"), "potato": ("sr:170026", "Potato"), "ramen": ("fndds:58407034", "Ramen"),
 "sachima": ("fndds:53452170", "Sachima"), "steak": ("fndds:21101000", "Steak"), "sushi": ("fndds:58151100", "Sushi"),
 "sweet_potato": ("sr:168482", "Sweet potato"), "tomato": ("sr:170457", "Tomato"), "watermelon": ("sr:167765", "Watermelon"),
 "zucchini": ("sr:169291", "Zucchini"),
 # SOHL classes (Indian meals)
 "dal_or_sambar": ("fndds:41305050", "Dal or sambar"), "accompaniment": ("fndds:63409020", "Accompaniment (chutney, pickle)"),
 "bread_or_roti_naan": ("fndds:51108100", "Roti or naan"), "curry_dish": ("fndds:75440600", "Curry"),
 "drink": ("fndds:92302000", "Drink (tea)"), "dry_vegetable": ("fndds:75340020", "Dry vegetable (sabzi)"),
 "eggs": ("fndds:32129990", "Eggs"), "fish_dish": ("fndds:27150320", "Fish curry"), "fruits": ("fndds:63311000", "Fruits"),
 "pasta": ("fndds:58146150", "Pasta"), "rice_dish": ("fndds:56205001", "Rice"), "salad": ("fndds:75113000", "Salad"),
 "snack_item": ("fndds:58124500", "Snack (samosa)"), "soup": ("fndds:75649110", "Soup"),
 "south_indian_breakfast": ("fndds:55702100", "South Indian breakfast (dosa)"), "sweet_item": ("fndds:13252500", "Indian sweet (barfi)"),
}

def main():
    names, portions = {}, {}
    for r in csv.DictReader(open(os.path.join(D, "sr_legacy_per100g.csv"))):
        names["sr:" + r["fdc_id"]] = (r["description"], r["energy_kcal"])
    for r in csv.DictReader(open(os.path.join(D, "fndds_compact_per100g.csv"))):
        names["fndds:" + r["food_code"]] = (r["description"], r["kcal"])
    for r in csv.DictReader(open(os.path.join(D, "sr_legacy_portions.csv"))):
        portions.setdefault("sr:" + r["fdc_id"], []).append(f'{r["amount"]} {r["modifier"] if r["unit"] == "undetermined" else r["unit"] + " " + r["modifier"]} = {r["gram_weight"]}')
    for r in csv.DictReader(open(os.path.join(D, "fndds_compact_portions.csv"))):
        portions.setdefault("fndds:" + r["food_code"], []).append(f'{r["portion_description"]} = {r["grams"]}')
    for label, (fid, name) in CHOICES.items():
        n = names.get(fid)
        print(f"{label:24} {fid:16} {n[0] if n else 'MISSING'} ({n[1] if n else '-'} kcal)")
        for p in portions.get(fid, [])[:8]:
            print("      ", p)

if __name__ == "__main__":
    main()
