import json
import sys


def load_todos(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return []


def save_todos(path, todos):
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(todos, handle, indent=2)


def main(argv):
    path = "todos.json"
    todos = load_todos(path)
    if not argv:
        if not todos:
            print("nothing to do")
        for number, todo in enumerate(todos, start=1):
            mark = "x" if todo["done"] else " "
            print(f"{number:>3} [{mark}] {todo['title']}")
        return 0
    if argv[0] == "add":
        todos.append({"title": " ".join(argv[1:]), "done": False})
    elif argv[0] == "done":
        todos[int(argv[1]) - 1]["done"] = True
    else:
        print("usage: todo.py [add TITLE | done N]", file=sys.stderr)
        return 2
    save_todos(path, todos)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
