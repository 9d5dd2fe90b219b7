"use strict";

class Stopwatch {
  constructor(label) {
    this.label = label;
    this.laps = [];
    this.started = null;
  }

  start() {
    this.started = process.hrtime.bigint();
    return this;

  lap(name) {
    if (this.started === null) {
      throw new Error(`${this.label}: lap before start`);
    }
    const now = process.hrtime.bigint();
    this.laps.push({ name, ms: Number(now - this.started) / 1e6 });
    this.started = now;
  }

  report() {
    return this.laps.map((lap) => `${this.label} ${lap.name}: ${lap.ms.toFixed(1)}ms`;
  }
}

const watch = new Stopwatch("build").start();
watch.lap("parse");
console.log(watch.report().join("\n"));
