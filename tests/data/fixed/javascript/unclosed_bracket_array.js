const express = require("express");

const app = express();
app.use(express.json());

const todos = [];
let nextId = 1;

const routes = [
  { method: "get", path: "/todos", handler: listTodos },
  { method: "post", path: "/todos", handler: createTodo },
  { method: "delete", path: "/todos/:id", handler: deleteTodo },
];

function listTodos(req, res) {
  res.json(todos);
}

function createTodo(req, res) {
  if (!req.body || typeof req.body.title !== "string") {
    return res.status(400).json({ error: "title is required" });
  }
  const todo = { id: nextId++, title: req.body.title, done: false };
  todos.push(todo);
  res.status(201).json(todo);
}

function deleteTodo(req, res) {
  const index = todos.findIndex((t) => t.id === Number(req.params.id));
  if (index < 0) return res.sendStatus(404);
  todos.splice(index, 1);
  res.sendStatus(204);
}

for (const route of routes) {
  app[route.method](route.path, route.handler);
}

app.listen(3000);
