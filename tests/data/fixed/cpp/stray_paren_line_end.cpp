#include <chrono>
#include <iostream>
#include <thread>

class Timer {
public:
    Timer() : start_(std::chrono::steady_clock::now()) {}

    double elapsed_ms() const {
        auto now = std::chrono::steady_clock::now();
        return std::chrono::duration<double, std::milli>(now - start_).count();
    }

private:
    std::chrono::steady_clock::time_point start_;
};

int main() {
    Timer timer;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    double first = timer.elapsed_ms();
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    std::cout << "first " << first << " ms, total " << timer.elapsed_ms() << " ms\n";
    return 0;
}
