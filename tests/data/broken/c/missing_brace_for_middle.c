#include <stdio.h>
#include <stdlib.h>

static int compare_ints(const void *a, const void *b) {
    int x = *(const int *)a;
    int y = *(const int *)b;
    return (x > y) - (x < y);
}

static void print_stats(int *values, int count, int verbose) {
    qsort(values, (size_t)count, sizeof values[0], compare_ints);
    if (verbose) {
        for (int i = 0; i < count; i++) {
            printf("%d%c", values[i], i + 1 < count ? ' ' : '\n');
    } else {
        printf("min %d max %d\n", values[0], values[count - 1]);
    }
    printf("median %d\n", values[count / 2]);
}

int main(int argc, char **argv) {
    int values[64];
    int count = 0;
    for (int i = 1; i < argc && count < 64; i++) {
        values[count++] = atoi(argv[i]);
    }
    if (count == 0) {
        fprintf(stderr, "usage: stats N...\n");
        return 2;
    }
    print_stats(values, count, getenv("VERBOSE") != NULL);
    return 0;
}
