#include <stdio.h>
#include <stdlib.h>

struct node {
    int value;
    struct node *next;
};

static struct node *push(struct node *head, int value) {
    struct node *node = malloc(sizeof *node);
    if (node == NULL) {
        exit(1);
    }
    node->value = value;
    node->next = head;
    return node;
}

static void free_list(struct node *head) {
    while (head != NULL) {
        struct node *next = head->next;
        free(head);
        head = next;
    }
}

int main(void) {
    struct node *list = NULL;
    for (int i = 1; i <= 5; i++) {
        list = push(list, i * i);
    }
    for (struct node *n = list; n != NULL; n = n->next) {
        printf("%d ", n->value);
    }
    printf("\n");
    free_list(list);
    return 0;
}
