#include <stdio.h>
#include <string.h>

struct command {
    const char *name;
    const char *help;
    int min_args;
};

static const struct command COMMANDS[] = {
    {"init", "create an empty repository", 0},
    {"add", "stage files", 1},
    {"commit", "record staged changes", 0},
    {"log", "show history", 0},
};

static const struct command *find(const char *name) {
    size_t n = sizeof COMMANDS / sizeof COMMANDS[0];
    for (size_t i = 0; i < n; i++) {
        if (strcmp(COMMANDS[i].name, name) == 0) {
            return &COMMANDS[i];
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    const struct command *cmd = argc > 1 ? find(argv[1]) : NULL;
    if (cmd == NULL) {
        fprintf(stderr, "usage: vcs <command>\n");
        return 2;
    }
    if (argc - 2 < cmd->min_args) {
        fprintf(stderr, "%s: %s (needs %d argument)\n", cmd->name, cmd->help, cmd->min_args);
        return 2;
    }
    printf("running %s\n", cmd->name);
    return 0;
}
