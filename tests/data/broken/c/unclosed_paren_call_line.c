#include <stdio.h>
#include <stdlib.h>

static int clamp(int value, int low, int high) {
    if (value < low) {
        return low;
    }
    if (value > high) {
        return high;
    }
    return value;
}

static int parse_percent(const char *text) {
    char *end = NULL;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0') {
        return -1;
    }
    return clamp((int)value, 0, 100;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        int percent = parse_percent(argv[i]);
        if (percent < 0) {
            fprintf(stderr, "not a number: %s\n", argv[i]);
            continue;
        }
        printf("%3d%% [%-20.*s]\n", percent, percent / 5, "####################");
    }
    return 0;
}
