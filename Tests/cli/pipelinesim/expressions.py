"""GitHub Actions expressions (`${{ … }}`), as far as the example workflows use them.

Modelled after GitHub's documented semantics (docs.github.com, "Evaluate expressions in workflows and
actions"): literals (null, booleans, numbers, 'strings' with '' as the escaped quote), property access
(`a.b`, `a['b']`, `a.*.b` filters), `!`, `<`, `<=`, `>`, `>=`, `==`, `!=` (loose: strings compare
case-insensitively, other kinds are coerced to numbers), `&&` and `||` returning an operand, parentheses, and
the functions contains, startsWith, endsWith, format, join, toJSON, fromJSON, success, always, failure,
cancelled. Property names are case-insensitive, as GitHub's are. A missing property is null. Anything else
(hashFiles, unknown functions or syntax) raises Unsupported: the simulator refuses what it does not model
rather than guess."""
import json
import math
import re

EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)


class Unsupported(Exception):
    """A workflow uses something the simulator does not model."""


class Filtered(list):
    """The result of a `.*` object filter: an array whose elements later property accesses map over."""


TOKEN = re.compile(r"""
    \s*(?:
      (?P<number>0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
    | (?P<string>'(?:[^']|'')*')
    | (?P<op>==|!=|<=|>=|&&|\|\||[!<>()\[\].,*])
    | (?P<name>[A-Za-z_][A-Za-z0-9_-]*)
    )""", re.X)


def tokenize(text):
    tokens, position = [], 0
    text = text.strip()
    while position < len(text):
        match = TOKEN.match(text, position)
        if not match or match.end() == position:
            raise Unsupported(f"expression syntax not modelled at {text[position:]!r} in {text!r}")
        position = match.end()
        kind = match.lastgroup
        tokens.append((kind, match.group(kind)))
    return tokens


def truthy(value):
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    if isinstance(value, str):
        return value != ""
    return True


def to_number(value):
    if value is None:
        return 0
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 0
        try:
            return int(text, 16) if text.lower().startswith("0x") else float(text)
        except ValueError:
            return math.nan
    return math.nan


def to_string(value):
    """How a value is written into a string (a `run:` block, an env value, format())."""
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2)
    return str(value)


def loose_equal(left, right):
    if isinstance(left, str) and isinstance(right, str):
        return left.lower() == right.lower()
    if isinstance(left, (dict, list)) or isinstance(right, (dict, list)):
        return left is right
    if type(left) is type(right) and not isinstance(left, (int, float)):
        return left == right
    a, b = to_number(left), to_number(right)
    return not (math.isnan(a) or math.isnan(b)) and a == b


def compare(left, right, op):
    if isinstance(left, str) and isinstance(right, str):
        a, b = left.lower(), right.lower()
    else:
        a, b = to_number(left), to_number(right)
        if math.isnan(a) or math.isnan(b):
            return False
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def lookup(value, name):
    if isinstance(value, Filtered):
        out = Filtered()
        for item in value:
            got = lookup(item, name)
            if got is not None:
                out.append(got)
        return out
    if isinstance(value, dict):
        if name in value:
            return value[name]
        lowered = name.lower() if isinstance(name, str) else name
        for key, item in value.items():
            if isinstance(key, str) and isinstance(lowered, str) and key.lower() == lowered:
                return item
        return None
    if isinstance(value, list) and not isinstance(name, str):
        index = int(to_number(name)) if not math.isnan(to_number(name)) else -1
        return value[index] if 0 <= index < len(value) else None
    return None


class Parser:
    def __init__(self, text, context, status):
        self.text, self.tokens, self.index = text, tokenize(text), 0
        self.context, self.status = context, status

    def peek(self):
        return self.tokens[self.index] if self.index < len(self.tokens) else (None, None)

    def take(self, value=None):
        token = self.peek()
        if token[0] is None or (value is not None and token[1] != value):
            raise Unsupported(f"expected {value or 'more'} in {self.text!r}")
        self.index += 1
        return token

    def parse(self):
        value = self.or_()
        if self.index != len(self.tokens):
            raise Unsupported(f"unexpected {self.peek()[1]!r} in {self.text!r}")
        return value

    def or_(self):
        value = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_()
            value = value if truthy(value) else right
        return value

    def and_(self):
        value = self.equality()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.equality()
            value = right if truthy(value) else value
        return value

    def equality(self):
        value = self.comparison()
        while self.peek()[1] in ("==", "!=") and self.peek()[0] == "op":
            op = self.take()[1]
            right = self.comparison()
            value = loose_equal(value, right) if op == "==" else not loose_equal(value, right)
        return value

    def comparison(self):
        value = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in ("<", "<=", ">", ">="):
            op = self.take()[1]
            value = compare(value, self.unary(), op)
        return value

    def unary(self):
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.postfix()

    def postfix(self):
        value = self.primary()
        while True:
            token = self.peek()
            if token == ("op", "."):
                self.take()
                kind, name = self.take()
                if kind == "op" and name == "*":
                    value = Filtered(value.values() if isinstance(value, dict) else value if isinstance(value, list) else [])
                elif kind == "name":
                    value = lookup(value, name)
                else:
                    raise Unsupported(f"property name expected in {self.text!r}")
            elif token == ("op", "["):
                self.take()
                index = self.or_()
                self.take("]")
                value = lookup(value, index)
            else:
                return value

    def primary(self):
        kind, text = self.take()
        if kind == "number":
            return int(text, 16) if text.lower().startswith("0x") else (float(text) if any(c in text for c in ".eE") else int(text))
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind == "op" and text == "(":
            value = self.or_()
            self.take(")")
            return value
        if kind == "name":
            if text == "null":
                return None
            if text in ("true", "false"):
                return text == "true"
            if self.peek() == ("op", "("):
                return self.call(text)
            names = {name.lower(): name for name in self.context}
            if text.lower() not in names:
                raise Unsupported(f"context {text!r} is not modelled (in {self.text!r})")
            return self.context[names[text.lower()]]
        raise Unsupported(f"unexpected {text!r} in {self.text!r}")

    def call(self, name):
        self.take("(")
        arguments = []
        if self.peek() != ("op", ")"):
            arguments.append(self.or_())
            while self.peek() == ("op", ","):
                self.take()
                arguments.append(self.or_())
        self.take(")")
        lowered = name.lower()
        if lowered in ("success", "always", "failure", "cancelled"):
            if arguments:
                raise Unsupported(f"{name}() with arguments")
            if self.status is None:
                raise Unsupported(f"{name}() is only available in if: conditions")
            return self.status(lowered)
        if lowered == "contains":
            haystack, needle = arguments
            if isinstance(haystack, list):
                return any(loose_equal(item, needle) for item in haystack)
            return to_string(needle).lower() in to_string(haystack).lower()
        if lowered == "startswith":
            return to_string(arguments[0]).lower().startswith(to_string(arguments[1]).lower())
        if lowered == "endswith":
            return to_string(arguments[0]).lower().endswith(to_string(arguments[1]).lower())
        if lowered == "format":
            template, values = to_string(arguments[0]), arguments[1:]
            return re.sub(r"\{\{|\}\}|\{(\d+)\}",
                          lambda m: "{" if m.group(0) == "{{" else "}" if m.group(0) == "}}" else to_string(values[int(m.group(1))]),
                          template)
        if lowered == "join":
            items = arguments[0] if isinstance(arguments[0], list) else [arguments[0]]
            separator = to_string(arguments[1]) if len(arguments) > 1 else ","
            return separator.join(to_string(item) for item in items)
        if lowered == "tojson":
            return json.dumps(arguments[0], indent=2)
        if lowered == "fromjson":
            return json.loads(to_string(arguments[0]))
        raise Unsupported(f"function {name}() is not modelled")


def evaluate(text, context, status=None):
    """The value of one expression (the text between `${{` and `}}`)."""
    value = Parser(text, context, status).parse()
    return list(value) if isinstance(value, Filtered) else value


def interpolate(text, context, status=None):
    """A string with every `${{ … }}` replaced by its value written as a string. A value that is only one
    expression keeps its kind (what `with:`, `matrix` and `if:` receive)."""
    if not isinstance(text, str):
        return text
    whole = EXPRESSION.fullmatch(text.strip())
    if whole and "${{" not in whole.group(1):
        return evaluate(whole.group(1), context, status)
    return EXPRESSION.sub(lambda m: to_string(evaluate(m.group(1), context, status)), text)


def condition(text, context, status):
    """An `if:` value: `${{ }}` optional; without a status function it means `success() && (…)`."""
    if text is None:
        return status("success")
    if isinstance(text, bool):
        return text
    source = str(text).strip()
    whole = EXPRESSION.fullmatch(source)
    if whole and "${{" not in whole.group(1):
        source = whole.group(1).strip()
    elif "${{" in source:
        source = to_string(interpolate(source, context, status))
        return truthy(source)
    if not re.search(r"\b(success|always|failure|cancelled)\s*\(", source, re.I):
        source = f"success() && ({source})"
    return truthy(evaluate(source, context, status))
