#include <iostream>
#include <map>
#include <string>

const std::map<std::string, int> kPorts = {
    {"http", 80},
    {"https", 443},
    {"ssh", 22},
    {"postgres", 5432},
    {"redis", 6379},
};

int lookup(const std::string &service) {
    auto it = kPorts.find(service);
    return it == kPorts.end() ? -1 : it->second;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        for (const auto &[name, port] : kPorts) {
            std::cout << name << '\t' << port << '\n';
        }
        return 0;
    }
    int port = lookup(argv[1]);
    if (port < 0) {
        std::cerr << "unknown service: " << argv[1] << '\n';
        return 1;
    }
    std::cout << port << '\n';
    return 0;
}
