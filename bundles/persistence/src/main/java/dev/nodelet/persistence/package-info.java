/**
 * The on-disk copy of the objects that the pods of a node reference, so that a Nodelet restarted without its API
 * server still serves them.
 *
 * <p>{@link dev.nodelet.persistence.Persistence#open} opens a directory with one file per resource type (an H2
 * MVStore: log-structured, a crash at any point leaves the last committed state readable). Each
 * {@link dev.nodelet.persistence.DiskStore} keeps, per object, its last version (with UID and resourceVersion) and,
 * per pod, the names it references. Secrets are always encrypted with AES-GCM, ConfigMaps when asked; the key comes
 * from a file that only its owner may read. A file written for another node, by another format version, with another
 * key, or damaged is moved aside and a fresh one is started.
 */
@Export
@Version("1.2.0")
package dev.nodelet.persistence;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
