#include <stdio.h>
#include <time.h>

struct job {
    const char *name;
    int priority;
    double seconds;
};

static void print_job(const struct job *job, time_t started) {
    char stamp[32];
    strftime(stamp, sizeof stamp, "%H:%M:%S", localtime(&started));
    printf(
        "%-12s priority=%d took=%.2fs started=%s\n",
        job->name,
        job->priority,
        job->seconds,
        stamp
    );
}

int main(void) {
    struct job jobs[] = {
        {"backup", 2, 12.5},
        {"index", 1, 3.25},
        {"report", 3, 0.75},
    };
    time_t now = time(NULL);
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        print_job(&jobs[i], now);
    }
    return 0;
}
