export interface Job {
  id: number;
  name: string;
  dependsOn: number[];
}

export class Scheduler {
  private jobs = new Map<number, Job>();

  add(job: Job): void {
    this.jobs.set(job.id, job);
  }

  order(): Job[] {
    const done = new Set<number>();
    const result: Job[] = [];
    const visit = (job: Job, trail: Set<number>): void => {
      if (done.has(job.id)) return;
      if (trail.has(job.id)) throw new Error(`cycle at job ${job.name}`);
      trail.add(job.id);
      for (const id of job.dependsOn) {
        const dependency = this.jobs.get(id);
        if (dependency) visit(dependency, trail);
      }
      done.add(job.id);
      result.push(job);
    };
    for (const job of this.jobs.values()) {
      visit(job, new Set());
    }
    return result;
  }

  names(): string[] {
    return this.order().map((job) => job.name);
  }
}
