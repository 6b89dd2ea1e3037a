"""Words and sentence forms the generator (gen.py) draws from. Every name, company, city and
address here is made up or generic; nothing comes from an external data set.

A form is a sentence template:
  {S}      the subject: "cus_301", "Customer cus_301", "Ana Ribeiro", "Ana", or "I" (first person)
  {Sp}     its possessive: "cus_301's", "Ana's", "my"
  {So}     its object form: "cus_301", "Ana", "me"
  {a|b}    a for the third person, b for the first ("{lives|live}")
  {name}   a value (str.format)
"""

FIRST = ["Ana", "Bruno", "Carla", "Diogo", "Elena", "Filipe", "Greta", "Hugo", "Ines", "Jonas",
         "Katrin", "Luis", "Marta", "Nuno", "Olga", "Pedro", "Rita", "Sven", "Tania", "Ugo",
         "Vera", "Walter", "Xenia", "Yusuf", "Zoe", "Amir", "Beatriz", "Carlos", "Dora", "Emil",
         "Farah", "Gil", "Hanna", "Ivo", "Julia", "Karl", "Lena", "Mateo", "Nadia", "Oscar",
         "Paula", "Quentin", "Rosa", "Samir", "Teresa", "Viktor", "Wanda", "Yara", "Zeno", "Alma"]
LAST = ["Ribeiro", "Costa", "Novak", "Lindqvist", "Moreau", "Fischer", "Silva", "Kowalski",
        "Bianchi", "Duarte", "Horvat", "Jensen", "Keller", "Lopes", "Marin", "Nieminen", "Ortega",
        "Petrov", "Quist", "Rossi", "Santos", "Toth", "Urban", "Varga", "Weber", "Yilmaz", "Zanetti"]
CITIES = ["Lisbon", "Porto", "Madrid", "Berlin", "Paris", "Lyon", "Milan", "Vienna", "Prague",
          "Warsaw", "Dublin", "Amsterdam", "Brussels", "Oslo", "Stockholm", "Helsinki",
          "Copenhagen", "Athens", "Zurich", "Seville", "Munich", "Hamburg", "Krakow", "Budapest",
          "Valencia", "Rotterdam", "Gothenburg", "Turin", "Leeds", "Bordeaux"]
COUNTRIES = ["Japan", "Peru", "Iceland", "Morocco", "Canada", "Vietnam", "Kenya", "Norway",
             "Chile", "Greece", "Mexico", "Thailand", "Scotland", "Argentina", "Croatia", "India"]
COMPANIES = ["Acme Corp", "Globex", "Initech", "Umbrella Logistics", "Stark Analytics",
             "Wayne Foods", "Hooli", "Vandelay Industries", "Soylent Labs", "Tyrell Systems",
             "Cyberdyne", "Oscorp", "Pied Piper", "Dunder Paper", "Monarch Travel", "Blue Harbor Bank",
             "Northwind Traders", "Contoso", "Fabrikam", "Litware"]
TITLES = ["a nurse", "a teacher", "a software engineer", "an accountant", "a project manager",
          "a data analyst", "an architect", "a pharmacist", "a graphic designer", "a sales manager",
          "a chef", "a lawyer", "a physiotherapist", "an electrician"]
STREETS = ["Rua Augusta", "Oak Street", "Hauptstrasse", "Rue de la Paix", "Via Roma", "Calle Mayor",
           "Elm Avenue", "Kungsgatan", "Baker Street", "Nowy Swiat", "Harbour Road", "Mill Lane"]
TIMEZONES = ["Europe/Lisbon", "Europe/Berlin", "America/New_York", "Asia/Tokyo",
             "America/Sao_Paulo", "Australia/Sydney", "Asia/Kolkata", "America/Chicago"]
NICKNAMES = [("Robert", "Rob", "Bobby"), ("Elizabeth", "Liz", "Beth"), ("Alexander", "Alex", "Sasha"),
             ("Katherine", "Kate", "Kathy"), ("William", "Will", "Bill"), ("Margaret", "Meg", "Maggie"),
             ("Daniel", "Dan", "Danny"), ("Josephine", "Jo", "Josie"), ("Nicholas", "Nick", "Nico"),
             ("Victoria", "Vicky", "Tori")]
CHANNELS = ["email", "phone", "SMS", "post", "WhatsApp"]
PLANS = ["Free", "Basic", "Pro", "Team", "Enterprise"]
DIETS = ["vegan", "vegetarian", "pescatarian", "keto"]
ITEMS = ["a blue kettle", "running shoes", "a desk lamp", "a coffee grinder", "a yoga mat",
         "a phone case", "a winter coat", "noise-cancelling headphones", "a cast-iron pan",
         "a backpack", "a set of towels", "a gaming mouse", "a rain jacket", "a bookshelf"]
TOPICS = ["a late delivery", "a billing error", "a broken zip", "login problems", "a missing item",
          "a wrong size", "a double charge", "a damaged screen"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]

# multi-valued attributes: any number of values hold at once; none contradicts another
MULTI = {
    "likes": (["green tea", "espresso", "jazz", "hiking", "sushi", "Italian food", "board games",
               "gardening", "photography", "cycling", "old movies", "dark chocolate", "opera",
               "spicy food", "crossword puzzles", "mountain biking"],
              ["{S} {likes|like} {v}.", "{S} {enjoys|enjoy} {v}.", "{S} really {likes|like} {v}.",
               "{S} also {likes|like} {v}.", "{S} {is|am} a fan of {v}."]),
    "speaks": (["Portuguese", "English", "French", "Spanish", "German", "Italian", "Japanese",
                "Polish", "Swedish", "Greek", "Dutch", "Arabic"],
               ["{S} {speaks|speak} {v}.", "{S} also {speaks|speak} {v}.", "{S} {is|am} fluent in {v}.",
                "{S} can speak {v}."]),
    "visited": (COUNTRIES,
                ["{S} {has|have} visited {v}.", "{S} {has|have} been to {v}.",
                 "{S} travelled to {v} in {year}.", "{S} went on holiday to {v} in {year}."]),
    "owns": (["a dog", "a cat", "a bike", "an electric car", "a sailing boat", "a Kindle",
              "a vinyl collection", "a 3D printer", "a piano", "a motorbike", "two parrots",
              "a summer house"],
             ["{S} {owns|own} {v}.", "{S} {has|have} {v}.", "{S} also {owns|own} {v}."]),
    "plays": (["chess", "tennis", "the piano", "the guitar", "football", "padel", "golf",
               "the violin", "basketball", "bridge"],
              ["{S} {plays|play} {v}.", "{S} {plays|play} {v} at weekends.", "{S} also {plays|play} {v}."]),
    "reads": (["science fiction", "history books", "crime novels", "poetry", "biographies",
               "fantasy novels", "travel guides", "cookbooks"],
              ["{S} {reads|read} {v}.", "{S} {enjoys|enjoy} reading {v}.", "{S} mostly {reads|read} {v}."]),
}

# facts about a customer that hold alongside anything above (each once per customer); each
# key's forms are paraphrases of one another, so the generator draws paraphrases from them
FACTS = {
    "allergy": (["peanuts", "shellfish", "penicillin", "cats", "pollen", "gluten"],
                ["{S} {is|am} allergic to {v}.", "{S} {has|have} an allergy to {v}."]),
    "children": (["two", "three", "one", "four"],
                 ["{S} {has|have} {v} children.", "{S} {has|have} {v} kids."]),
    "invoices": (CITIES,
                 ["{S} {wants|want} invoices sent by post to {v}.",
                  "{S} would like invoices mailed to {v}.",
                  "Invoices for {So} should be posted to {v}."]),
    "delivery_time": (["morning", "afternoon", "evening"],
                      ["{S} {prefers|prefer} {v} deliveries.", "{S} would rather have deliveries in the {v}.",
                       "{S} {likes|like} {v} deliveries best."]),
    "loyalty": (["gold", "silver", "bronze"],
                ["{S} {is|am} a {v} member of the loyalty programme.",
                 "{S} {holds|hold} {v} status in the loyalty programme.",
                 "{S} {has|have} {v} membership in the loyalty programme."]),
    "account_year": (["2015", "2017", "2019", "2020", "2021", "2022"],
                     ["{Sp} account was opened in {v}.", "{S} opened {their|my} account in {v}.",
                      "{S} {has|have} had an account since {v}."]),
    "birthday": (["14 June", "3 March", "28 October", "9 January", "21 August", "30 November"],
                 ["{Sp} birthday is on {v}.", "{S} {was|was} born on {v}.", "{S} {celebrates|celebrate} {their|my} birthday on {v}."]),
    "phone": (["an iPhone", "an Android phone", "a Pixel phone"],
              ["{S} {uses|use} {v}.", "{Sp} phone is {v}."]),
}

# single-valued attributes with states and changes; "state" forms are paraphrases of one another
# (same value), "change" forms say the value changed ({old} to {new})
STATE = {
    "residence": dict(
        state=["{S} {lives|live} in {v}.", "{S} {resides|reside} in {v}.", "{Sp} home is in {v}.",
               "{S} {is|am} living in {v}."],
        change=["{S} moved to {new}.", "{S} {has|have} moved to {new}.", "{S} relocated to {new}.",
                "{S} moved from {old} to {new}.", "{S} {has|have} relocated from {old} to {new}.",
                "{S} now {lives|live} in {new}.", "{S} left {old} and now {lives|live} in {new}.",
                "{S} no longer {lives|live} in {old}; {S} moved to {new}."],
        dated_change=["On {date}, {s} moved to {new}.", "{S} moved to {new} on {date}.",
                      "As of {date}, {s} {lives|live} in {new}.", "{S} relocated from {old} to {new} in {month}."],
        dated_state=["As of {date}, {s} {lives|live} in {v}."]),
    "employer": dict(
        state=["{S} {works|work} at {v}.", "{S} {is|am} employed by {v}.", "{S} {works|work} for {v}."],
        change=["{S} changed jobs and now {works|work} at {new}.", "{S} now {works|work} at {new}.",
                "{S} left {old} for {new}.", "{S} left {old} and joined {new}.",
                "{S} changed jobs; {their|my} new employer is {new}.", "{S} {is|am} no longer at {old}; {S} {works|work} at {new} now.",
                "{S} joined {new} after leaving {old}.", "{S} {has|have} a new job at {new}."],
        dated_change=["On {date}, {s} started a new job at {new}.", "{S} joined {new} in {month}.",
                      "As of {date}, {s} {works|work} at {new}."],
        dated_state=["As of {date}, {s} {works|work} at {v}."]),
    "job": dict(
        state=["{S} {is|am} {v}.", "{S} {works|work} as {v}."],
        change=["{S} now {works|work} as {new}.", "{S} {is|am} now {new}.", "{S} {has|have} become {new}.",
                "{S} {is|am} no longer {old}; {S} {works|work} as {new} now.", "{S} changed careers and {is|am} now {new}."],
        dated_change=["Since {date}, {s} {has|have} worked as {new}.", "In {month}, {s} became {new}."],
        dated_state=["As of {date}, {s} {works|work} as {v}."]),
    "diet": dict(
        state=["{S} {follows|follow} a {v} diet.", "{S} {is|am} {v}.", "{S} {eats|eat} a {v} diet."],
        change=["{S} no longer {follows|follow} a {old} diet.", "{S} {is|am} no longer {old}.",
                "{S} stopped being {old}.", "{S} {is|am} {new} now.", "{S} switched from a {old} diet to a {new} diet.",
                "{S} gave up the {old} diet and {is|am} {new} now."],
        dated_change=["Since {date}, {s} {is|am} no longer {old}.", "In {month}, {s} stopped following a {old} diet."],
        dated_state=["As of {date}, {s} {follows|follow} a {v} diet."]),
    "contact": dict(
        state=["{S} {prefers|prefer} to be contacted by {v}.", "{Sp} preferred contact channel is {v}.",
               "{S} {wants|want} to be contacted by {v}.", "The best way to reach {So} is by {v}."],
        change=["{S} now {prefers|prefer} to be contacted by {new}.", "{S} switched from {old} to {new} for contact.",
                "{Sp} preferred contact channel is now {new}.", "From now on, contact {So} by {new}, not {old}.",
                "{S} switched to {new} for all contact.", "{S} no longer {wants|want} to be contacted by {old}; use {new}."],
        dated_change=["From {date}, {s} {wants|want} to be contacted by {new} instead of {old}.",
                      "On {date}, {s} switched {their|my} contact channel to {new}."],
        dated_state=["As of {date}, {s} {prefers|prefer} to be contacted by {v}."]),
    "plan": dict(
        state=["{S} {is|am} on the {v} plan.", "{S} {has|have} a {v} plan subscription.", "{S} {subscribes|subscribe} to the {v} plan."],
        change=["{S} {dir}graded from {old} to {new}.", "{S} {dir}graded from the {old} plan to the {new} plan.",
                "{S} {dir}graded to the {new} plan.", "{S} switched to the {new} plan.", "{S} {is|am} now on the {new} plan.",
                "{S} moved from the {old} plan to the {new} plan."],
        dated_change=["On {date}, {s} {dir}graded from {old} to {new}.", "{S} switched to the {new} plan on {date}."],
        dated_state=["As of {date}, {s} {is|am} on the {v} plan."]),
    "relationship": dict(
        state=["{S} {is|am} {v}.", "{Sp} relationship status is {v}."],
        change=[],  # chosen by the transition (RELATIONSHIP below)
        dated_change=[],
        dated_state=["As of {date}, {s} {is|am} {v}."]),
    "nickname": dict(
        state=["{S} {prefers|prefer} to be called {v}.", "{S} {goes|go} by {v}.", "{Sp} preferred name is {v}."],
        change=["{S} now {goes|go} by {new}.", "{S} asked to be called {new} from now on.",
                "{Sp} preferred name is now {new}, not {old}.", "{S} no longer {goes|go} by {old}; {S} {prefers|prefer} {new}."],
        dated_change=["Since {date}, {s} {goes|go} by {new}."],
        dated_state=["As of {date}, {s} {goes|go} by {v}."]),
    "timezone": dict(
        state=["{Sp} time zone is {v}.", "{S} {is|am} in the {v} time zone.", "{Sp} timezone is set to {v}."],
        change=["{Sp} time zone is now {new}.", "{S} changed {their|my} time zone from {old} to {new}.",
                "{S} switched {their|my} timezone to {new}.", "{S} {is|am} now in the {new} time zone."],
        dated_change=["On {date}, {s} changed {their|my} time zone to {new}."],
        dated_state=["As of {date}, {sp} time zone is {v}."]),
    "address": dict(
        state=["{Sp} shipping address is {v}.", "{S} {has|have} {their|my} parcels shipped to {v}.",
               "Parcels for {So} go to {v}."],
        change=["{Sp} new shipping address is {new}.", "{S} changed {their|my} shipping address to {new}.",
                "{Sp} shipping address changed from {old} to {new}.", "{S} updated {their|my} shipping address to {new}."],
        dated_change=["On {date}, {s} changed {their|my} shipping address to {new}."],
        dated_state=["As of {date}, {sp} shipping address is {v}."]),
}

RELATIONSHIP = {  # initial -> (new state, change forms)
    "single": [("married", ["{S} got married.", "{S} got married in {month}.", "{S} {is|am} married now.",
                            "{S} {is|am} no longer single; {S} got married."]),
               ("engaged", ["{S} got engaged.", "{S} {is|am} now engaged.", "{S} got engaged in {month}."])],
    "married": [("divorced", ["{S} got divorced.", "{S} {is|am} divorced now.", "{S} {is|am} no longer married."])],
    "engaged": [("married", ["{S} got married.", "{S} {is|am} married now.", "{S} got married in {month}."])],
}

# events: things that happened; two events never contradict, whatever their numbers and dates
EVENTS = {
    "shipped": ["Order {o} of {S} shipped on {date}.", "{Sp} order {o} was shipped on {date}.",
                "Order {o} shipped on {date}.", "Order {o} left the warehouse on {date}."],
    "ordered": ["{S} ordered {item} on {date} (order {o}).", "{S} placed order {o} for {item} on {date}."],
    "refund": ["{S} asked for a refund on order {o}.", "{S} requested a refund for order {o} on {date}.",
               "A refund was requested for order {o} on {date}."],
    "ticket_opened": ["{S} opened ticket T-{t} about {topic} on {date}.", "Ticket T-{t} was opened on {date} about {topic}."],
    "ticket_closed": ["Ticket T-{t} was closed on {date}.", "Support closed ticket T-{t} on {date}."],
    "damaged": ["{S} reported that parcel P-{p} arrived damaged on {date}.", "Parcel P-{p} of order {o} arrived damaged."],
    "payment": ["{S} paid {amt} EUR on {date}.", "Payment of {amt} EUR for order {o} was received on {date}.",
                "{S} made a payment of {amt} EUR on {date}."],
    "rescheduled": ["Delivery of order {o} was rescheduled to {date}.", "{S} rescheduled the delivery of order {o} to {date}."],
    "did": ["{S} called support on {date}.", "{S} visited the {city} store on {date}.",
            "{S} attended the onboarding webinar on {date}.", "{S} left a {stars}-star review on {date}.",
            "{S} logged in from a new device on {date}.", "{S} redeemed a voucher on {date}.",
            "{S} chatted with support about {topic} on {date}.", "{S} returned {item} on {date}."],
}
