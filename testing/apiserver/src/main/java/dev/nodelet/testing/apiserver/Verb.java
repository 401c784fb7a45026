package dev.nodelet.testing.apiserver;

/**
 * The Kubernetes API verbs, as the server classifies requests for fault injection, authorization and the write
 * record.
 */
public enum Verb {
  GET, LIST, WATCH, CREATE, UPDATE, PATCH, DELETE, DELETECOLLECTION;

  /** True for the verbs that change stored objects. */
  public boolean isWrite() {
    return this == CREATE || this == UPDATE || this == PATCH || this == DELETE || this == DELETECOLLECTION;
  }
}
