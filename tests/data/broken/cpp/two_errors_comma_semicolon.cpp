#include <iostream>
#include <string>
#include <vector>

enum class Suit { Clubs, Diamonds, Hearts, Spades };

struct Card {
    int rank;
    Suit suit;
};

std::string suit_name(Suit suit) {
    switch (suit) {
    case Suit::Clubs:
        return "clubs";
    case Suit::Diamonds:
        return "diamonds";
    case Suit::Hearts:
        return "hearts";
    case Suit::Spades:
        return "spades";
    }
    return "?";
}

int main() {
    std::vector<Card> hand{
        {12, Suit::Hearts},
        {1, Suit::Spades}
        {7, Suit::Clubs},
    };
    int points = 0;
    for (const Card &card : hand) {
        points += card.rank > 10 ? 10 : card.rank
        std::cout << card.rank << " of " << suit_name(card.suit) << '\n';
    }
    std::cout << "points: " << points << '\n';
    return 0;
}
