"""A pool made with alone=True hands work to a helper only while the process
answers at most one web request (engram_site/threads.py)."""

from engram_site.threads import DbThreadPool, answering, busy


def test_a_lone_request_gets_a_helper_and_a_busy_process_does_not():
    pool = DbThreadPool("test-alone", 1, alone=True)
    with answering():
        assert not busy()
        future = pool.try_submit(lambda: 7)
        assert future is not None and future.result(timeout=5) == 7
        with answering():
            assert busy()
            assert pool.try_submit(lambda: 7) is None
    assert not busy()


def test_an_ordinary_pool_ignores_the_load():
    pool = DbThreadPool("test-not-alone", 1)
    with answering(), answering():
        future = pool.try_submit(lambda: 8)
        assert future is not None and future.result(timeout=5) == 8
