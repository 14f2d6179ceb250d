//! Invalid bodies made from a valid one: for each constraint the schema
//! states at each place the body reaches, one copy of the body that
//! breaks exactly that constraint, with the error the validator words for
//! it. A server that enforces the spec refuses every one.

use serde_json::{Value, json};

use super::constraints::{self, Constraint};
use super::{Spec, property};

/// One mutated body: the constraint it breaks, where, and the error line
/// (without the `METHOD template: ` prefix) the validator gives for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub kind: Constraint,
    /// The JSON path of the broken value (`$.members[0].port`).
    pub path: String,
    pub body: Value,
    pub expected: String,
}

/// A step of a path into a body.
#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn display(steps: &[Step]) -> String {
    let mut at = "$".to_string();
    for step in steps {
        match step {
            Step::Key(key) => {
                at.push('.');
                at.push_str(key);
            }
            Step::Index(i) => at.push_str(&format!("[{i}]")),
        }
    }
    at
}

fn at_mut<'a>(value: &'a mut Value, steps: &[Step]) -> &'a mut Value {
    steps.iter().fold(value, |value, step| match step {
        Step::Key(key) => &mut value[key.as_str()],
        Step::Index(i) => &mut value[*i],
    })
}

/// `bound` moved one step past itself, as an integer when it is one.
fn past(bound: &Value, by: i64) -> Value {
    match bound.as_i64() {
        Some(n) => json!(n + by),
        None => json!(bound.as_f64().unwrap_or_default() + by as f64),
    }
}

struct Walk<'a> {
    spec: &'a Spec,
    root: &'a Value,
    steps: Vec<Step>,
    out: Vec<Violation>,
}

impl Walk<'_> {
    /// Records the root with the value at the current place replaced by
    /// `new` (or the property `removed` of the object there deleted).
    fn push(
        &mut self,
        kind: Constraint,
        new: Option<Value>,
        expected: impl FnOnce(&str) -> String,
    ) {
        let mut body = self.root.clone();
        let path = display(&self.steps);
        match new {
            Some(new) => *at_mut(&mut body, &self.steps) = new,
            None => {
                let (last, parent) = self.steps.split_last().expect("a property");
                if let (Step::Key(key), Some(object)) =
                    (last, at_mut(&mut body, parent).as_object_mut())
                {
                    object.remove(key);
                }
            }
        }
        let expected = expected(&path);
        self.out.push(Violation {
            kind,
            path,
            body,
            expected,
        });
    }

    fn walk(&mut self, schema: &Value, value: &Value) {
        let spec = self.spec;
        let schema = spec.resolve(schema);
        if value.is_null() {
            return;
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
            let outside = match value {
                Value::String(_) => json!("NOT_IN_THE_ENUM"),
                Value::Number(_) => json!(-987_654_321),
                _ => return,
            };
            if !allowed.contains(&outside) {
                let list = &schema["enum"];
                self.push(Constraint::Enum, Some(outside.clone()), |at| {
                    constraints::not_in_enum(at, &outside, list)
                });
            }
            return;
        }
        if Spec::is_any(schema) {
            return;
        }
        match value {
            Value::String(text) => self.string(schema, text),
            Value::Number(_) => {
                for (kind, by) in [(Constraint::Minimum, -1), (Constraint::Maximum, 1)] {
                    let Some(bound) = schema.get(kind.keyword()).filter(|b| b.is_number()) else {
                        continue;
                    };
                    let key = match kind {
                        Constraint::Minimum => "exclusiveMinimum",
                        _ => "exclusiveMaximum",
                    };
                    let exclusive = schema.get(key) == Some(&Value::Bool(true));
                    let new = if exclusive {
                        bound.clone()
                    } else {
                        past(bound, by)
                    };
                    self.push(kind, Some(new.clone()), |at| {
                        constraints::range(at, &new, kind, bound, exclusive)
                    });
                }
            }
            Value::Array(list) => self.array(schema, list),
            Value::Object(object) => self.object(schema, object),
            _ => {}
        }
    }

    fn string(&mut self, schema: &Value, text: &str) {
        let count = text.chars().count();
        if let Some(bound) = schema.get("maxLength").filter(|b| b.is_u64()) {
            let over = bound.as_u64().unwrap_or_default() as usize + 1;
            // The value's own characters again, so a pattern still holds.
            let seed = if text.is_empty() { "a" } else { text };
            let long: String = seed.chars().cycle().take(over).collect();
            self.push(Constraint::MaxLength, Some(json!(long)), |at| {
                constraints::length(at, over, Constraint::MaxLength, bound)
            });
        }
        if let Some(bound) = schema.get("minLength").filter(|b| b.as_u64() > Some(0)) {
            let under = (bound.as_u64().unwrap_or_default() as usize - 1).min(count);
            let short: String = text.chars().take(under).collect();
            self.push(Constraint::MinLength, Some(json!(short)), |at| {
                constraints::length(at, under, Constraint::MinLength, bound)
            });
        }
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
            && let Some(Some(regex)) = self.spec.patterns.get(pattern)
        {
            let candidates = ["", " ", "-", "not matching, pattern!", "\u{1}"];
            if let Some(bad) = candidates.iter().find(|c| !regex.is_match(c)) {
                let bad = json!(bad);
                self.push(Constraint::Pattern, Some(bad.clone()), |at| {
                    constraints::mismatch(at, &bad, pattern)
                });
            }
        }
    }

    fn array(&mut self, schema: &Value, list: &[Value]) {
        if let Some(bound) = schema.get("maxItems").filter(|b| b.is_u64())
            && let Some(first) = list.first()
        {
            let over = bound.as_u64().unwrap_or_default() as usize + 1;
            let mut longer = list.to_vec();
            longer.resize(over.max(list.len()), first.clone());
            self.push(Constraint::MaxItems, Some(json!(longer)), |at| {
                constraints::items(at, over, Constraint::MaxItems, bound)
            });
        }
        if let Some(bound) = schema.get("minItems").filter(|b| b.as_u64() > Some(0)) {
            let under = (bound.as_u64().unwrap_or_default() as usize - 1).min(list.len());
            let shorter = json!(list[..under].to_vec());
            self.push(Constraint::MinItems, Some(shorter), |at| {
                constraints::items(at, under, Constraint::MinItems, bound)
            });
        }
        for (i, item) in list.iter().enumerate() {
            self.steps.push(Step::Index(i));
            self.walk(&schema["items"], item);
            self.steps.pop();
        }
    }

    fn object(&mut self, schema: &Value, object: &serde_json::Map<String, Value>) {
        let spec = self.spec;
        let (mut properties, mut required) = (Vec::new(), Vec::new());
        spec.shape(schema, &mut properties, &mut required);
        for name in required {
            if object.get(name).is_some_and(|v| !v.is_null()) {
                self.steps.push(Step::Key(name.to_string()));
                self.push(Constraint::Required, None, constraints::required);
                self.steps.pop();
            }
        }
        let values = schema.get("additionalProperties").filter(|v| v.is_object());
        for (key, item) in object {
            let Some(property) =
                property(&properties, key).or(values.filter(|_| properties.is_empty()))
            else {
                continue;
            };
            self.steps.push(Step::Key(key.clone()));
            self.walk(property, item);
            self.steps.pop();
        }
    }
}

impl Violation {
    /// For a valid `body` of `method template`, one mutated body per
    /// constraint the schema states at each place the body reaches: an
    /// array one item over `maxItems` (its first item repeated) or under
    /// `minItems`, a string over `maxLength` or under `minLength`, a
    /// number past `minimum` or `maximum`, a value outside an `enum`, a
    /// string that does not match a `pattern`, a required property
    /// removed. Each breaks that constraint alone, and carries the error
    /// [`Spec::check_request`] gives for it. Empty when the spec has no
    /// such operation or it takes no body.
    pub fn all_of(spec: &Spec, method: &str, template: &str, body: &Value) -> Vec<Violation> {
        let Ok((schema, _)) = spec.body_schema(method, template) else {
            return Vec::new();
        };
        let mut walk = Walk {
            spec,
            root: body,
            steps: Vec::new(),
            out: Vec::new(),
        };
        walk.walk(schema, body);
        walk.out
    }
}
