// A file descriptor owned by exactly one object, closed on destruction.
#ifndef AFXDP_FD_HH
#define AFXDP_FD_HH

#include <unistd.h>
#include <utility>

namespace afxdp {

class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) noexcept : fd_(fd) {}
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    Fd(Fd &&o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    Fd &operator=(Fd &&o) noexcept
    {
        std::swap(fd_, o.fd_);
        return *this;
    }
    ~Fd()
    {
        if (fd_ >= 0) {
            close(fd_);
        }
    }

    int get() const noexcept { return fd_; }
    // The descriptor, no longer closed by this object.
    int release() noexcept { return std::exchange(fd_, -1); }
    explicit operator bool() const noexcept { return fd_ >= 0; }

private:
    int fd_ = -1;
};

}  // namespace afxdp

#endif  // AFXDP_FD_HH
