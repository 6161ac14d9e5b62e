#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static const char *src =
"__kernel void k0(__global double *x, int n){int i=get_global_id(0); if(i<n) x[i]+=1.0;}\n";
int main(int argc,char**argv){
  cl_platform_id pl[8]; cl_uint np; clGetPlatformIDs(8,pl,&np);
  for(cl_uint p=0;p<np;p++){
    char name[256]; clGetPlatformInfo(pl[p],CL_PLATFORM_NAME,256,name,NULL);
    if(!strstr(name,"NVIDIA")) continue;
    cl_device_id d; clGetDeviceIDs(pl[p],CL_DEVICE_TYPE_GPU,1,&d,NULL);
    size_t es; clGetDeviceInfo(d,CL_DEVICE_EXTENSIONS,0,NULL,&es); char*ext=malloc(es+1);
    clGetDeviceInfo(d,CL_DEVICE_EXTENSIONS,es,ext,NULL); printf("platform %s\nextensions: %s\n",name,ext);
    char ver[256]; clGetDeviceInfo(d,CL_DEVICE_VERSION,256,ver,NULL); printf("version %s\n",ver);
    cl_int st; cl_context c=clCreateContext(NULL,1,&d,NULL,NULL,&st);
    cl_program pr=clCreateProgramWithSource(c,1,&src,NULL,&st); clBuildProgram(pr,1,&d,"",NULL,NULL);
    cl_kernel k=clCreateKernel(pr,"k0",&st);
    int ns[3]={1024,200000,1000000};
    cl_mem buf=clCreateBuffer(c,CL_MEM_READ_WRITE,8*1000000,NULL,&st);
    double zero=0; 
    for(int prof=0;prof<2;prof++){
      cl_command_queue q=clCreateCommandQueue(c,d,prof?CL_QUEUE_PROFILING_ENABLE:0,&st);
      clEnqueueFillBuffer(q,buf,&zero,8,0,8*1000000,0,NULL,NULL); clFinish(q);
      for(int ni=0;ni<3;ni++){ int n=ns[ni];
        clSetKernelArg(k,0,sizeof buf,&buf); clSetKernelArg(k,1,sizeof n,&n);
        size_t lw=256, gw=((n+255)/256)*256;
        for(int ev=0;ev<2;ev++) for(int setarg=0;setarg<2;setarg++){
          int N=20000; double best=1e9, bestall=1e9;
          for(int rep=0;rep<3;rep++){
            clFinish(q); double t0=now();
            for(int i=0;i<N;i++){ cl_event e;
              if(setarg){clSetKernelArg(k,0,sizeof buf,&buf); clSetKernelArg(k,1,sizeof n,&n);}
              clEnqueueNDRangeKernel(q,k,1,NULL,&gw,&lw,0,NULL,ev?&e:NULL); if(ev) clReleaseEvent(e);}
            double t1=now(); clFinish(q); double t2=now();
            if((t1-t0)<best)best=t1-t0; if((t2-t0)<bestall)bestall=t2-t0; }
          printf("prof=%d n=%7d event=%d setarg=%d: enqueue %.2f us/launch, to finish %.2f us/launch\n",prof,n,ev,setarg,1e6*best/N,1e6*bestall/N);
        }
        /* round trip: launch + blocking read of 8 bytes */
        { int N=2000; double t0=now(); double v;
          for(int i=0;i<N;i++){clEnqueueNDRangeKernel(q,k,1,NULL,&gw,&lw,0,NULL,NULL); clEnqueueReadBuffer(q,buf,CL_TRUE,0,8,&v,0,NULL,NULL);}
          printf("prof=%d n=%7d launch+blocking read: %.2f us\n",prof,n,1e6*(now()-t0)/N);
          t0=now(); for(int i=0;i<N;i++){for(int j=0;j<10;j++)clEnqueueNDRangeKernel(q,k,1,NULL,&gw,&lw,0,NULL,NULL); clEnqueueReadBuffer(q,buf,CL_TRUE,0,8,&v,0,NULL,NULL);}
          printf("prof=%d n=%7d 10 launches+blocking read: %.2f us\n",prof,n,1e6*(now()-t0)/N);
        }
      }
      clReleaseCommandQueue(q);
    }
  }
  return 0;
}
