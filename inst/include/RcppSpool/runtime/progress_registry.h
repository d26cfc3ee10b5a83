// The progress objects alive in the process, which R's main thread draws
// when it is serviced (ProgressCounter, ProgressBar: progress.h).
#pragma once

#include "../abi.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "../table/api_table.h"
#include "../engine/runtime.h"
#include "../host/main_thread.h"
#include "../host/r_host.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace progress_detail {

//! Registered objects: each is its client's object and drawing function
//! (the client's code: the registry never looks inside an object). A plain
//! vector under a mutex: objects come and go rarely, the main thread walks
//! it at most every 10 ms.
class Registry {
public:
    //! Registers an object and installs the host's redraw hook.
    void add(void* self, table::DrawFn draw);
    //! Unregisters an object (from its destructor, on any thread): once this
    //! returns, the main thread no longer draws it. The last one out
    //! uninstalls the hook.
    void remove(void* self);
    //! Draws what is due (main thread only; elsewhere it does nothing).
    void drawAll();

private:
    struct Item {
        void* self;
        table::DrawFn draw;
    };
    std::mutex m_;
    std::vector<Item> items_;
};

//! The runtime's registry. Never destroyed: a progress object that outlives
//! static destruction (a global one) can still leave it.
RCPPSPOOL_HIDDEN inline Registry& registry()
{
    static Registry* const r = new Registry();
    return *r;
}

//! The host's redraw hook while progress objects exist.
inline void drawRegistered() { registry().drawAll(); }

inline void Registry::add(void* self, table::DrawFn draw)
{
    std::lock_guard<std::mutex> lk(m_);
    items_.push_back({self, draw});
    host::redrawHook().store(&drawRegistered, std::memory_order_release);
}

inline void Registry::remove(void* self)
{
    std::lock_guard<std::mutex> lk(m_);
    items_.erase(std::remove_if(items_.begin(), items_.end(), [self](const Item& i) { return i.self == self; }),
                 items_.end());
    if (items_.empty()) {
        host::RedrawFn ours = &drawRegistered;
        host::redrawHook().compare_exchange_strong(ours, nullptr, std::memory_order_acq_rel);
    }
}

inline void Registry::drawAll()
{
    if (!host::isMainThread()) return;
    std::lock_guard<std::mutex> lk(m_);
    if (items_.empty()) return;
    for (const Item& i : items_) i.draw(i.self);
}

}  // namespace progress_detail
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
