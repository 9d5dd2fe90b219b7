#include <stdio.h>

enum token { TOKEN_NUMBER, TOKEN_PLUS, TOKEN_MINUS, TOKEN_END };

static enum token classify(int c) {
    switch (c) {
    case '+':
        return TOKEN_PLUS;
    case '-'
        return TOKEN_MINUS;
    case EOF:
    case '\n':
        return TOKEN_END;
    default:
        return TOKEN_NUMBER;
    }
}

int main(void) {
    int c;
    int counts[4] = {0};
    while ((c = getchar()) != EOF) {
        if (c == ' ') {
            continue;
        }
        counts[classify(c)]++;
    }
    printf("numbers %d, plus %d, minus %d, lines %d\n", counts[TOKEN_NUMBER], counts[TOKEN_PLUS],
           counts[TOKEN_MINUS], counts[TOKEN_END]);
    return 0;
}
