// The value types every result is made of (boxes, macros, meal records, grams sources) come with `import FoodMoment`:
// a library user should not have to know which module defines them.
@_exported public import FoodCore
