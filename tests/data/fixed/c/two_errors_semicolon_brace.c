#include <stdio.h>
#include <string.h>

#define WIDTH 40

static void center(const char *text) {
    int length = (int)strlen(text);
    int padding = length < WIDTH ? (WIDTH - length) / 2 : 0;
    printf("%*s%s\n", padding, "", text);
}

static void rule(char c) {
    for (int i = 0; i < WIDTH; i++) {
        putchar(c);
    }
    putchar('\n');
}

int main(int argc, char **argv) {
    rule('=');
    if (argc < 2) {
        center("(no title)");
    } else {
        for (int i = 1; i < argc; i++) {
            center(argv[i]);
        }
    }
    rule('=');
    return 0;
}
