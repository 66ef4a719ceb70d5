! A Fortran MPI-IO program: Fortran calls reach the layer through MPICH's
! Fortran bindings, which convert file handles with MPI_File_f2c/c2f.
! Every rank writes a block of a 2-D array of integers through a subarray
! view (write_all), reads it back (read_all after a seek), then appends a
! record with iwrite_at + MPI_Wait; rank 0 prints what it checked.
program fortran_io
  use mpi
  implicit none
  integer, parameter :: n = 64
  integer :: ierr, rank, nprocs, fh, i, j, elements, rows
  integer :: status(MPI_STATUS_SIZE), request, block
  integer :: sizes(2), subsizes(2), starts(2)
  integer, allocatable :: local(:, :), back(:, :)
  integer :: record(4), wrong, total_wrong
  integer(kind=MPI_OFFSET_KIND) :: disp, offset, file_size
  character(len=4096) :: directory

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, directory)

  rows = n / nprocs
  allocate(local(n, rows), back(n, rows))
  do j = 1, rows
    do i = 1, n
      local(i, j) = (rank * rows + j - 1) * n + i
    end do
  end do
  sizes = (/ n, n /)
  subsizes = (/ n, rows /)
  starts = (/ 0, rank * rows /)
  call MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, &
                                MPI_INTEGER, block, ierr)
  call MPI_Type_commit(block, ierr)

  call MPI_File_open(MPI_COMM_WORLD, trim(directory) // '/fortran.dat', &
                     MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  call check(ierr == MPI_SUCCESS, 'open')
  disp = 0
  call MPI_File_set_view(fh, disp, MPI_INTEGER, block, 'native', MPI_INFO_NULL, ierr)
  call MPI_File_write_all(fh, local, n * rows, MPI_INTEGER, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, elements, ierr)
  call check(ierr == MPI_SUCCESS .and. elements == n * rows, 'write_all count')
  offset = 0
  call MPI_File_seek(fh, offset, MPI_SEEK_SET, ierr)
  back = -1
  call MPI_File_read_all(fh, back, n * rows, MPI_INTEGER, status, ierr)
  wrong = count_wrong(local, back)
  call MPI_Allreduce(wrong, total_wrong, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(total_wrong == 0, 'read_all contents')

  call MPI_File_set_view(fh, disp, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL, ierr)
  record = (/ rank, rank + 1, rank + 2, rank + 3 /)
  offset = 4 * n * n + 16 * rank
  call MPI_File_iwrite_at(fh, offset, record, 4, MPI_INTEGER, request, ierr)
  call MPI_Wait(request, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, elements, ierr)
  call check(elements == 4, 'iwrite_at count')
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_get_size(fh, file_size, ierr)
  call MPI_File_close(fh, ierr)
  call check(ierr == MPI_SUCCESS, 'close')
  if (rank == 0) then
    print '(a, i0, a, i0, a)', 'fortran: ', nprocs, ' ranks, read_all verified, file size ', &
      file_size, ' bytes'
  end if
  call MPI_Type_free(block, ierr)
  deallocate(local, back)
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: abort_error
    if (.not. ok) then
      print '(a, i0, a, a)', 'fortran: rank ', rank, ' check failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, abort_error)
    end if
  end subroutine check

  integer function count_wrong(expected, got)
    integer, intent(in) :: expected(:, :), got(:, :)
    count_wrong = count(expected /= got)
  end function count_wrong

end program fortran_io
