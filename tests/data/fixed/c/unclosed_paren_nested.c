#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Print each word of the input with its first letter in upper case. */

static void capitalize(char *word) {
    if (word[0] != '\0') {
        word[0] = (char)toupper((unsigned char)word[0]);
    }
    for (size_t i = 1; word[i] != '\0'; i++) {
        word[i] = (char)tolower((unsigned char)word[i]);
    }
}

int main(void) {
    char buffer[256];
    int words = 0;
    while (scanf("%255s", buffer) == 1) {
        capitalize(buffer);
        printf("%s%s", words > 0 ? " " : "", buffer);
        words++;
    }
    printf("\n%d words, longest buffer %zu\n", words, strlen(buffer));
    return 0;
}
