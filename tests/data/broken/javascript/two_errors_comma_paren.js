"use strict";

const fs = require("fs");

const FIELDS = [
  "id",
  "email"
  "createdAt",
  "plan",
];

function toCsvValue(value) {
  const text = value === undefined || value === null ? "" : String(value);
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function exportUsers(users, file) {
  const rows = [FIELDS.join(",")];
  for (const user of users) {
    rows.push(FIELDS.map((field) => toCsvValue(user[field])).join(",");
  }
  fs.writeFileSync(file, rows.join("\n") + "\n", "utf8");
  return rows.length - 1;
}

const users = JSON.parse(fs.readFileSync(process.argv[2] || "users.json", "utf8"));
const count = exportUsers(users, process.argv[3] || "users.csv");
console.log(`exported ${count} users`);
