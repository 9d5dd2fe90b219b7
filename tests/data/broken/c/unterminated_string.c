#include <stdio.h>
#include <string.h>

#define MAX_NAME 64

struct user {
    char name[MAX_NAME];
    int age;
};

static int read_user(FILE *in, struct user *user) {
    if (fscanf(in, "%63s %d", user->name, &user->age) != 2) {
        return 0;
    }
    return user->age >= 0 && user->age < 150;
}

int main(void) {
    struct user user;
    int valid = 0;
    int invalid = 0;
    while (!feof(stdin)) {
        if (read_user(stdin, &user)) {
            printf("%-20s %3d\n, user.name, user.age);
            valid++;
        } else {
            invalid++;
            break;
        }
    }
    printf("%d valid records\n", valid);
    return invalid > 0 && strlen(user.name) == 0;
}
