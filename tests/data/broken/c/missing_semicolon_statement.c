#include <stdio.h>
#include <string.h>

/* Reverse each line read from standard input. */

static void reverse(char *text, size_t length) {
    for (size_t i = 0, j = length - 1; i < j; i++, j--) {
        char tmp = text[i];
        text[i] = text[j];
        text[j] = tmp;
    }
}

int main(void) {
    char line[1024];
    int count = 0;
    while (fgets(line, sizeof line, stdin) != NULL) {
        size_t length = strcspn(line, "\n");
        line[length] = '\0'
        if (length > 0) {
            reverse(line, length);
        }
        puts(line);
        count++;
    }
    fprintf(stderr, "%d lines\n", count);
    return 0;
}
