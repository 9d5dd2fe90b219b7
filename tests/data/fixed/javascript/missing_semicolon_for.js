// Word frequencies of a text, most common first.
const STOP_WORDS = new Set(["the", "a", "an", "and", "of", "to", "in"]);

function tokenize(text) {
  return text
    .toLowerCase()
    .split(/[^a-z']+/)
    .filter((word) => word && !STOP_WORDS.has(word));
}

function countWords(lines) {
  const counts = {};
  for (let i = 0; i < lines.length; i++) {
    for (const word of tokenize(lines[i])) {
      counts[word] = (counts[word] || 0) + 1;
    }
  }
  return counts;
}

function topWords(counts, n) {
  return Object.entries(counts)
    .sort(([, a], [, b]) => b - a)
    .slice(0, n);
}

const sample = [
  "The quick brown fox jumps over the lazy dog",
  "The dog barks and the fox runs",
  "A fox in the den",
];

for (const [word, count] of topWords(countWords(sample), 3)) {
  console.log(`${word}: ${count}`);
}
