/*
 * operr: the kinds of failed ops and their names (see operr.h).
 */
#include "engine/operr.h"

#include <errno.h>

static const char *const op_err_names[OP_ERR_KINDS] = {
    [OP_ERR_REFUSED] = "refused",
    [OP_ERR_RESET] = "reset",
    [OP_ERR_TIMEOUT] = "timeout",
    [OP_ERR_ADDRNOTAVAIL] = "addrnotavail",
    [OP_ERR_AGAIN] = "eagain",
    [OP_ERR_SHORT] = "short",
    [OP_ERR_WRONG] = "wrong",
    [OP_ERR_UNEXPECTED] = "unexpected",
    [OP_ERR_TOOBIG] = "too_big",
    [OP_ERR_STATUS] = "status",
    [OP_ERR_ERRREPLY] = "error_reply",
    [OP_ERR_BODY] = "body",
    [OP_ERR_FDS] = "fds",
    [OP_ERR_OTHER] = "other",
};

const char *op_err_name(enum op_err e)
{
    return (unsigned)e < OP_ERR_KINDS ? op_err_names[e] : "?";
}

enum op_err op_err_from_errno(int err)
{
    switch (err) {
    case ECONNREFUSED:
    case ENOENT:
        return OP_ERR_REFUSED;
    case ECONNRESET:
    case EPIPE:
    case ECONNABORTED:
        return OP_ERR_RESET;
    case ETIMEDOUT:
        return OP_ERR_TIMEOUT;
    case EADDRNOTAVAIL:
        return OP_ERR_ADDRNOTAVAIL;
    case EAGAIN:
        return OP_ERR_AGAIN;
    case EMFILE:
    case ENFILE:
        return OP_ERR_FDS;
    default:
        return OP_ERR_OTHER;
    }
}

uint64_t op_err_total(const uint64_t counts[OP_ERR_KINDS])
{
    uint64_t sum = 0;

    for (int i = 0; i < OP_ERR_KINDS; i++)
        sum += counts[i];
    return sum;
}
