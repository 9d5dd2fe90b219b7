"use strict";

const express = require("express");

const app = express();
const todos = [];
let nextId = 1;

app.use(express.json());

app.get("/todos", (req, res) => {
  const done = req.query.done;
  const list = done === undefined ? todos : todos.filter((t) => String(t.done) === done);
  res.json(list);
});

app.post("/todos", (req, res) => {
  if (typeof req.body.title !== "string" || req.body.title.trim() === "") {
    return res.status(400).json({ error: "title is required" });
  }
  const todo = { id: nextId++, title: req.body.title.trim(), done: false };
  todos.push(todo);
  res.status(201).json(todo);
}

app.delete("/todos/:id", (req, res) => {
  const index = todos.findIndex((t) => t.id === Number(req.params.id));
  if (index === -1) return res.sendStatus(404);
  todos.splice(index, 1);
  res.sendStatus(204);
});

app.listen(3000, () => console.log("todo API on :3000"));
