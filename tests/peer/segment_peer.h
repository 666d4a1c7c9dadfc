/*
 * segment_peer.h - for tests that play a faulty or hostile peer: the test
 * process reaches into the segment that libmri has attached in it and
 * writes where only the other side should (a corrupt trace ring head, a
 * status word left odd, a file name as the cache configuration). C, for
 * the CMocka suites; the GoogleTest ones may use it too.
 */
#ifndef MRI_TEST_SEGMENT_PEER_H
#define MRI_TEST_SEGMENT_PEER_H

#ifdef __cplusplus
extern "C" {
#endif

/* The segment of the loaded application: the System V mapping of this
 * process (from /proc/self/maps) whose header carries the protocol's magic
 * and version, or NULL when there is none. */
void *mri_test_segment(void);

/* Words of that segment (NULL without one). */
char *mri_test_cache_config(void);                        /* tool-written text, mri_test_cache_config_bytes() */
unsigned mri_test_cache_config_bytes(void);
unsigned long long *mri_test_trace_head(unsigned thread);  /* application-written ring head */
unsigned long long mri_test_trace_ring_records(void);     /* records per ring */
unsigned *mri_test_status_seq(void);                       /* application-written status sequence word */
char *mri_test_last_error(void);                           /* application-written message, mri_test_message_bytes() */
unsigned mri_test_message_bytes(void);

#ifdef __cplusplus
}
#endif

#endif
