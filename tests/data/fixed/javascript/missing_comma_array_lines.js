"use strict";

const RULES = [
  { name: "no-empty-title", test: (post) => post.title.trim() !== "" },
  { name: "short-slug", test: (post) => post.slug.length <= 60 },
  { name: "has-date", test: (post) => !Number.isNaN(Date.parse(post.date)) },
  { name: "has-tags", test: (post) => Array.isArray(post.tags) && post.tags.length > 0 },
];

const SKIPPED_STATUSES = [
  "draft",
  "archived",
  "deleted",
];

function lint(posts) {
  const problems = [];
  for (const post of posts) {
    if (SKIPPED_STATUSES.includes(post.status)) continue;
    for (const rule of RULES) {
      if (!rule.test(post)) problems.push(`${post.slug || "?"}: ${rule.name}`);
    }
  }
  return problems;
}

module.exports = { lint, RULES };
