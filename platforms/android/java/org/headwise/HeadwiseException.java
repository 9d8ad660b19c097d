package org.headwise;

/** A failed headwise call: the C API's hw_status code, its stable name and the message. */
public final class HeadwiseException extends Exception {
  private static final long serialVersionUID = 1L;
  private final int status;
  private final String statusName;

  public HeadwiseException(int status, String statusName, String message) {
    super(statusName + ": " + message);
    this.status = status;
    this.statusName = statusName;
  }

  /** The hw_status value (headwise.h), e.g. 20 for HW_ERR_IO. */
  public int status() { return status; }

  /** The stable name of the status (hw_status_name), e.g. "IO_ERROR" or "INVALID_MODEL". */
  public String statusName() { return statusName; }
}
