#include <iostream>
#include <string>
#include <utility>

class Account {
public:
    Account(std::string owner, long cents) : owner_(std::move(owner)), cents_(cents) {}

    bool withdraw(long amount) {
        if (amount <= 0 || amount > cents_) {
            return false;
        }
        cents_ -= amount;
        return true;
    }

    void deposit(long amount) { cents_ += amount; }
    long balance() const { return cents_; }
    const std::string &owner() const { return owner_; }

private
    std::string owner_;
    long cents_;
};

int main() {
    Account account("ana", 10000);
    account.deposit(2500);
    bool ok = account.withdraw(20000);
    std::cout << account.owner() << ": " << account.balance() << (ok ? "" : " (declined)") << '\n';
    return 0;
}
