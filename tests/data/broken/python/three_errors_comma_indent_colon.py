"""Render a Markdown table from a list of records."""

COLUMNS = [
    ("name", "Name"),
    ("owner", "Owner"),
    ("stars", "Stars"),
]

RECORDS = [
    {"name": "parser", "owner": "ana", "stars": 120},
    {"name": "scheduler", "owner": "bo", "stars": 87}
    {"name": "cli", "owner": "chen", "stars": 45},
]


def cell(value):
    text = str(value)
        return text.replace("|", "\\|")


def render(records, columns):
    widths = {}
    for key, title in columns:
        values = [cell(record[key]) for record in records]
        widths[key] = max(len(title), *(len(value) for value in values))
    header = "| " + " | ".join(title.ljust(widths[key]) for key, title in columns) + " |"
    rule = "|" + "|".join("-" * (widths[key] + 2) for key, _title in columns) + "|"
    lines = [header, rule]
    for record in records
        cells = (cell(record[key]).ljust(widths[key]) for key, _title in columns)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render(RECORDS, COLUMNS))
