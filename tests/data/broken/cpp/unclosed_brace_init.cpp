#include <chrono>
#include <iostream>
#include <map>
#include <string>

struct Options {
    std::string host;
    int port;
    std::chrono::seconds timeout;
};

const std::map<std::string, Options> kProfiles{
    {"local", {"localhost", 8080, std::chrono::seconds(30)}},
    {"staging", {"staging.internal", 443, std::chrono::seconds(10)},
    {"production", {"api.example.com", 443, std::chrono::seconds(5)}},
};

Options profile(const std::string &name) {
    auto it = kProfiles.find(name);
    if (it == kProfiles.end()) {
        throw std::out_of_range("no profile " + name);
    }
    return it->second;
}

int main(int argc, char **argv) {
    Options options = profile(argc > 1 ? argv[1] : "local");
    std::cout << options.host << ':' << options.port << " timeout " << options.timeout.count()
              << "s\n";
    return 0;
}
